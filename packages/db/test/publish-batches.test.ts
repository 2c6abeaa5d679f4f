import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { presentPostB, resolvePostOutcome, type TPlatform, type TPostRecord } from '@sps/core';
import { batchLoader, uniqueRounds } from '../src/batch.js';
import {
  createDb,
  createPostRepository,
  createPublishRepository,
  createSocialAccountRepository,
  type TDb,
} from '../src/index.js';
import { createTestAccount, createTestDatabase, type TTestDatabase } from '../src/testing.js';

// The publisher's writes run batched across concurrent jobs; each caller must still get exactly the answer
// (and the row changes) the one-row version gave, including the duplicate and missing-row cases.
/** A claim's lease end a minute from now (the tests below that read it pass their own). */
const lease = () => new Date(Date.now() + 60_000);

describe('publisher batches', () => {
  let database: TTestDatabase;
  let db: TDb;
  let accountId: string;
  let accounts: Partial<Record<TPlatform, string>>;
  beforeAll(async () => {
    database = await createTestDatabase();
    db = createDb(database.url, { poolMax: 4 });
    ({ accountId } = await createTestAccount(db));
    const social = createSocialAccountRepository(db);
    accounts = {};
    for (const platform of ['twitter', 'mastodon'] as const) {
      const row = await social.connect({
        accountId,
        platform,
        accountName: platform,
        externalId: null,
        instanceUrl: null,
        credentialsEncrypted: 'sealed',
      });
      accounts[platform] = row.id;
    }
  });
  afterAll(async () => {
    await db.$disconnect();
    await database.drop();
  });

  async function publishingPost(content: string, platforms: TPlatform[] = ['twitter', 'mastodon']) {
    const post = await createPostRepository(db).create(
      accountId,
      'draft',
      { content, platforms },
      new Date(),
    );
    const started = await createPublishRepository(db).begin({
      accountId,
      postId: post.id,
      from: ['draft'],
      accounts,
    });
    if (started.kind !== 'started') throw new Error(started.kind);
    return started;
  }

  it('splits a batch into rounds of unique keys, in call order', () => {
    expect(uniqueRounds(['a', 'b', 'a', 'c', 'a', 'b'], (k) => k)).toEqual([[0, 1, 3], [2, 5], [4]]);
    expect(uniqueRounds([], (k: string) => k)).toEqual([]);
  });

  it('a batch that throws fails only the item that cannot be done; earlier rounds keep their answers', async () => {
    const runs: string[][] = [];
    let lateRuns = 0;
    const loader = batchLoader<string, string>(
      async (items) => {
        runs.push([...items]);
        if (items.includes('bad')) throw new Error('bad item');
        if (items.includes('late')) lateRuns += 1;
        if (lateRuns > 1 && items.includes('late')) throw new Error('late round fails');
        return items.map((item) => item.toUpperCase());
      },
      (item) => item,
    );
    const settled = await Promise.allSettled(['a', 'bad', 'b'].map((item) => loader.load(item)));
    expect(settled.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual([
      'A',
      'bad item',
      'B',
    ]);
    // The whole batch first, then each item alone.
    expect(runs).toEqual([['a', 'bad', 'b'], ['a'], ['bad'], ['b']]);

    const twice = await Promise.allSettled([loader.load('late'), loader.load('late')]);
    // The first round ran (it may have written); only the second round's caller sees the failure.
    expect(twice.map((r) => r.status)).toEqual(['fulfilled', 'rejected']);
  });

  it('a post deleted while publishing fails only its own write-ahead in a batch', async () => {
    const repo = createPublishRepository(db);
    const [{ post: kept }, { post: gone }] = await Promise.all([
      publishingPost('kept', ['twitter']),
      publishingPost('gone', ['twitter']),
    ]);
    await db.post.delete({ where: { id: gone.id } });
    const claimed = await Promise.all([
      repo.markSending(kept.id, 'twitter', 0, 'k', 0, lease()),
      repo.markSending(gone.id, 'twitter', 0, 'g', 0, lease()),
    ]);
    expect(claimed).toEqual([true, false]);
    expect((await repo.loadForPublish(kept.id))?.segments).toEqual([
      expect.objectContaining({ platform: 'twitter', segmentIndex: 0, status: 'sending' }),
    ]);
  });

  it('finalizes many posts in one batch, each with its outcome and one outbox event; a second call and a stale attempt get null', async () => {
    const repo = createPublishRepository(db);
    const posts = await Promise.all(Array.from({ length: 8 }, (_, i) => publishingPost(`final ${i}`)));
    // Even posts: both networks succeed; odd posts: both fail.
    await Promise.all(
      posts.flatMap(({ post }, i) =>
        (['twitter', 'mastodon'] as const).map((platform) =>
          repo.updateTarget(
            post.id,
            platform,
            i % 2 === 0
              ? {
                  status: 'succeeded',
                  remotePostId: `${i}-${platform}`,
                  remoteUrl: `https://n.test/${i}`,
                  error: null,
                }
              : { status: 'failed', error: `no ${i}`, errorKind: 'rejected' },
          ),
        ),
      ),
    );
    const first = posts[0];
    if (!first) throw new Error('no post');
    const results = await Promise.all([
      ...posts.map(({ post, attempt }) => repo.finalize(post.id, attempt)),
      repo.finalize(first.post.id, first.attempt), // the same post twice in one batch
      repo.finalize(first.post.id, first.attempt + 1), // a stale attempt number
    ]);
    posts.forEach(({ post }, i) => {
      const result = results[i];
      expect(result?.id).toBe(post.id);
      expect(result?.status).toBe(i % 2 === 0 ? 'published' : 'failed');
      expect(result?.publishedAt instanceof Date).toBe(i % 2 === 0);
      expect(result?.targets.map((t) => [t.platform, t.status])).toEqual([
        ['twitter', i % 2 === 0 ? 'succeeded' : 'failed'],
        ['mastodon', i % 2 === 0 ? 'succeeded' : 'failed'],
      ]);
    });
    expect(results.slice(-2)).toEqual([null, null]);
    expect(await repo.finalize(first.post.id, first.attempt)).toBeNull();

    const events = await db.event.findMany({
      where: { accountId, type: { in: ['post.published', 'post.failed'] } },
    });
    expect(events).toHaveLength(8);
    for (const [i, { post }] of posts.entries()) {
      const event = events.find((e) => (e.data as { post: { id: string } }).post.id === post.id);
      expect(event?.type).toBe(i % 2 === 0 ? 'post.published' : 'post.failed');
      expect((event?.data as { post?: { status: string } } | undefined)?.post?.status).toBe(
        i % 2 === 0 ? 'published' : 'failed',
      );
    }
  });

  it('finalize ends a post as resolvePostOutcome says for every pair of network results', async () => {
    const repo = createPublishRepository(db);
    const statuses = ['succeeded', 'failed', 'unknown', 'pending'] as const;
    const pairs = statuses.flatMap((a) => statuses.map((b) => [a, b] as const));
    const posts = await Promise.all(pairs.map(([a, b]) => publishingPost(`pair ${a} ${b}`)));
    await Promise.all(
      posts.flatMap(({ post }, i) =>
        (['twitter', 'mastodon'] as const).map((platform, j) => {
          const status = pairs[i]?.[j] ?? 'pending';
          return status === 'pending' ? null : repo.updateTarget(post.id, platform, { status });
        }),
      ),
    );
    const ended = await Promise.all(posts.map(({ post, attempt }) => repo.finalize(post.id, attempt)));
    const rows = await db.post.findMany({ where: { id: { in: posts.map(({ post }) => post.id) } } });
    posts.forEach(({ post }, i) => {
      const expected = resolvePostOutcome([...(pairs[i] ?? [])]);
      expect([pairs[i], rows.find((r) => r.id === post.id)?.status]).toEqual([pairs[i], expected]);
      expect([pairs[i], ended[i]?.status ?? 'publishing']).toEqual([pairs[i], expected]);
    });
  });

  it('records segment write-aheads and sends; a duplicate in one batch counts twice, a missing row fails only its caller', async () => {
    const repo = createPublishRepository(db);
    const { post } = await publishingPost('segments', ['twitter']);
    await Promise.all([
      repo.markSending(post.id, 'twitter', 0, 'key-0', 0, lease()),
      repo.markSending(post.id, 'twitter', 0, 'key-0', 1, lease()),
      repo.markSending(post.id, 'twitter', 1, 'key-1', 0, lease()),
    ]);
    const [sent, missing] = await Promise.allSettled([
      repo.markSent(post.id, 'twitter', 0, {
        remoteId: 'r0',
        remoteUrl: 'https://n.test/r0',
        meta: { cid: 'c' },
      }),
      repo.markSent(post.id, 'twitter', 7, { remoteId: 'r7', remoteUrl: 'https://n.test/r7' }),
    ]);
    expect(sent.status).toBe('fulfilled');
    expect(missing.status).toBe('rejected');
    const loaded = await repo.loadForPublish(post.id);
    const byIndex = new Map(loaded?.segments.map((s) => [s.segmentIndex, s]));
    expect(byIndex.get(0)).toMatchObject({ status: 'sent', remoteId: 'r0', meta: { cid: 'c' }, attempts: 2 });
    expect(byIndex.get(1)).toMatchObject({ status: 'sending', remoteId: null, attempts: 1 });
  });

  it('a write-ahead claims the segment over the state its caller read: a second run of the job claims nothing', async () => {
    const repo = createPublishRepository(db);
    const { post } = await publishingPost('claims', ['twitter']);
    // Two runs of one job both read no row: in one batch or one after the other, only the first claims.
    expect(
      await Promise.all([
        repo.markSending(post.id, 'twitter', 0, 'k', 0, lease()),
        repo.markSending(post.id, 'twitter', 0, 'k', 0, lease()),
      ]),
    ).toEqual([true, false]);
    expect(await repo.markSending(post.id, 'twitter', 0, 'k', 0, lease())).toBe(false);
    // A resend over the row as read (attempts 1) claims it; a run that read the same row afterwards does not.
    expect(await repo.markSending(post.id, 'twitter', 0, 'k', 1, lease())).toBe(true);
    expect(await repo.markSending(post.id, 'twitter', 0, 'k', 1, lease())).toBe(false);
    // A sent segment is never claimed again, whatever count was read.
    await repo.markSent(post.id, 'twitter', 0, { remoteId: 'r0', remoteUrl: 'https://n.test/r0' });
    expect(await repo.markSending(post.id, 'twitter', 0, 'k', 2, lease())).toBe(false);
    const [row] = (await repo.loadForPublish(post.id))?.segments ?? [];
    expect(row).toMatchObject({ status: 'sent', remoteId: 'r0', attempts: 2 });
  });

  it('a claim carries its lease: renewed only by the run that holds it, given back, and kept over a new claim', async () => {
    const repo = createPublishRepository(db);
    const { post } = await publishingPost('lease', ['twitter']);
    const at = (ms: number) => new Date(Date.UTC(2030, 0, 1) + ms);
    const claimedUntil = async () =>
      (await repo.loadForPublish(post.id))?.segments.find((s) => s.segmentIndex === 0)?.claimedUntil;
    expect(await repo.markSending(post.id, 'twitter', 0, 'k', 0, at(1_000))).toBe(true);
    expect(await claimedUntil()).toEqual(at(1_000));
    // The holder (its claim wrote attempts 1) renews; a run whose count is stale renews nothing.
    expect(await repo.renewClaim(post.id, 'twitter', 0, 1, at(5_000))).toBe(true);
    expect(await repo.renewClaim(post.id, 'twitter', 0, 2, at(9_000))).toBe(false);
    expect(await claimedUntil()).toEqual(at(5_000));
    // Given back (the call ended with the row still `sending`): the lease lapses at once.
    expect(await repo.renewClaim(post.id, 'twitter', 0, 1, at(0))).toBe(true);
    expect(await claimedUntil()).toEqual(at(0));
    // A lapsed lease's row is claimed again over its count, with the new lease; the old holder lost it.
    expect(await repo.markSending(post.id, 'twitter', 0, 'k', 1, at(7_000))).toBe(true);
    expect(await repo.renewClaim(post.id, 'twitter', 0, 1, at(9_000))).toBe(false);
    expect(await claimedUntil()).toEqual(at(7_000));
    // A sent segment has no lease to renew.
    await repo.markSent(post.id, 'twitter', 0, { remoteId: 'r0', remoteUrl: 'https://n.test/r0' });
    expect(await repo.renewClaim(post.id, 'twitter', 0, 2, at(9_000))).toBe(false);
  });

  it('starts concurrent publishes in one batch, each checked on its own: tenancy, status, version, the same post twice', async () => {
    const repo = createPublishRepository(db);
    const posts = createPostRepository(db);
    const { accountId: otherAccount } = await createTestAccount(db, 'pro', 'Other');
    const draft = (content: string, account = accountId) =>
      posts.create(account, 'draft', { content, platforms: ['twitter'] }, new Date());
    const [a, b, c, d, theirs] = await Promise.all([
      draft('a'),
      draft('b'),
      draft('c'),
      draft('d'),
      draft('x', otherAccount),
    ]);
    if (!a || !b || !c || !d || !theirs) throw new Error('no drafts');
    const start = (postId: string, extra: Partial<Parameters<typeof repo.begin>[0]> = {}) =>
      repo.begin({ accountId, postId, from: ['draft'], accounts, ...extra });
    const outcomes = await Promise.all([
      start(a.id, { clearQueue: true }),
      start(a.id.toUpperCase()), // the same post again, in the same turn
      start(b.id, { preFailed: { twitter: { error: 'allowance used up', errorKind: 'rejected' } } }),
      start(c.id, { expectUpdatedAt: new Date(c.updatedAt.getTime() - 1) }),
      start(d.id, { from: ['scheduled'] }),
      start(theirs.id), // another account's post
    ]);
    expect(outcomes.map((o) => o.kind)).toEqual([
      'started',
      'not_publishable',
      'started',
      'changed',
      'not_publishable',
      'not_found',
    ]);
    expect(outcomes[1]).toEqual({ kind: 'not_publishable', status: 'publishing' });
    expect(outcomes[4]).toEqual({ kind: 'not_publishable', status: 'draft' });
    const [startedA, , startedB] = outcomes;
    if (startedA?.kind !== 'started' || startedB?.kind !== 'started') throw new Error('not started');
    expect(startedA.post.id).toBe(a.id);
    expect(startedA.post.targets).toEqual([
      expect.objectContaining({ platform: 'twitter', status: 'pending' }),
    ]);
    expect(startedB.post.id).toBe(b.id);
    expect(startedB.post.targets).toEqual([
      expect.objectContaining({ platform: 'twitter', status: 'failed', error: 'allowance used up' }),
    ]);
    const rows = await db.post.findMany({ where: { id: { in: [a.id, b.id, c.id, d.id, theirs.id] } } });
    expect(Object.fromEntries(rows.map((r) => [r.content, [r.status, r.publishAttempt]]))).toEqual({
      a: ['publishing', 1],
      b: ['publishing', 1],
      c: ['draft', 0],
      d: ['draft', 0],
      x: ['draft', 0],
    });
  });

  const success = (remoteId: string, finalizeAttempt: number | null, segmentIndex: number | null = 0) => ({
    ...(segmentIndex === null
      ? {}
      : {
          sent: { segmentIndex, remoteId, remoteUrl: `https://n.test/${remoteId}`, meta: { cid: remoteId } },
        }),
    remotePostId: remoteId,
    remoteUrl: `https://n.test/${remoteId}`,
    errorKind: null,
    finalizeAttempt,
  });
  const outcomeEvents = async (postId: string) =>
    (
      await db.event.findMany({ where: { accountId, type: { in: ['post.published', 'post.failed'] } } })
    ).filter((e) => (e.data as { post: { id: string } }).post.id === postId);

  it("a network's success writes its last segment, its result and the post's end with one outbox event; the post is the one PostgreSQL then holds", async () => {
    const repo = createPublishRepository(db);
    const { post, attempt } = await publishingPost('done in one', ['twitter']);
    await repo.markSending(post.id, 'twitter', 0, 'k', 0, lease());
    const finalized = await repo.networkSucceeded(post.id.toUpperCase(), 'twitter', success('r1', attempt));
    expect(finalized?.status).toBe('published');
    expect(finalized?.publishedAt).toBeInstanceOf(Date);
    expect(finalized).toEqual(await createPostRepository(db).find(accountId, post.id));
    expect(finalized?.targets).toEqual([
      expect.objectContaining({ platform: 'twitter', status: 'succeeded', remotePostId: 'r1', error: null }),
    ]);
    const loaded = await repo.loadForPublish(post.id);
    expect(loaded?.segments).toEqual([
      expect.objectContaining({ segmentIndex: 0, status: 'sent', remoteId: 'r1', meta: { cid: 'r1' } }),
    ]);
    const events = await outcomeEvents(post.id);
    expect(events.map((e) => e.type)).toEqual(['post.published']);
    expect((events[0]?.data as { post: unknown } | undefined)?.post).toEqual(
      JSON.parse(JSON.stringify(presentPostB(finalized as TPostRecord))),
    );
    // Done again (a duplicated job): the result is written again, the post is not finalized twice.
    expect(await repo.networkSucceeded(post.id, 'twitter', success('r1', attempt, null))).toBeNull();
    expect(await repo.finalize(post.id, attempt)).toBeNull();
    expect(await outcomeEvents(post.id)).toHaveLength(1);
  });

  it('a success does not end a post whose other network is still pending; finalize does once it is done', async () => {
    const repo = createPublishRepository(db);
    const { post, attempt } = await publishingPost('two networks');
    await repo.markSending(post.id, 'twitter', 0, 'k', 0, lease());
    expect(await repo.networkSucceeded(post.id, 'twitter', success('t1', attempt))).toBeNull();
    expect((await db.post.findUniqueOrThrow({ where: { id: post.id } })).status).toBe('publishing');
    expect(await outcomeEvents(post.id)).toHaveLength(0);
    await repo.updateTarget(post.id, 'mastodon', { status: 'failed', error: 'no', errorKind: 'rejected' });
    const finalized = await repo.finalize(post.id, attempt);
    expect(finalized?.status).toBe('published');
    expect(await outcomeEvents(post.id)).toHaveLength(1);
  });

  it('both networks of a post done in one batch end it once, for the first caller; a failed network and a success publish it', async () => {
    const repo = createPublishRepository(db);
    const [{ post, attempt }, { post: mixed, attempt: mixedAttempt }] = await Promise.all([
      publishingPost('both at once'),
      publishingPost('one failed'),
    ]);
    await Promise.all([
      repo.markSending(post.id, 'twitter', 0, 'k', 0, lease()),
      repo.markSending(post.id, 'mastodon', 0, 'k', 0, lease()),
      repo.markSending(mixed.id, 'mastodon', 0, 'k', 0, lease()),
      repo.updateTarget(mixed.id, 'twitter', { status: 'failed', error: 'no', errorKind: 'rejected' }),
    ]);
    const [first, second, third] = await Promise.all([
      repo.networkSucceeded(post.id, 'twitter', success('t', attempt)),
      repo.networkSucceeded(post.id, 'mastodon', success('m', attempt)),
      repo.networkSucceeded(mixed.id, 'mastodon', success('x', mixedAttempt)),
    ]);
    expect(first?.status).toBe('published');
    expect(first?.targets.map((t) => [t.platform, t.status])).toEqual([
      ['twitter', 'succeeded'],
      ['mastodon', 'succeeded'],
    ]);
    expect(second).toBeNull();
    expect(third?.targets.map((t) => [t.platform, t.status])).toEqual([
      ['twitter', 'failed'],
      ['mastodon', 'succeeded'],
    ]);
    expect(third?.status).toBe('published');
    expect(await outcomeEvents(post.id)).toHaveLength(1);
    expect(await outcomeEvents(mixed.id)).toHaveLength(1);
  });

  it('in one batch, a deleted post fails only its caller, a post being removed and a stale attempt are not ended, a missing segment writes no result', async () => {
    const repo = createPublishRepository(db);
    const [ok, gone, removing, stale, noSegment] = await Promise.all(
      ['ok', 'gone', 'removing', 'stale', 'no segment'].map((c) => publishingPost(c, ['twitter'])),
    );
    if (!ok || !gone || !removing || !stale || !noSegment) throw new Error('no posts');
    await Promise.all(
      [ok, gone, removing, stale].map(({ post }) => repo.markSending(post.id, 'twitter', 0, 'k', 0, lease())),
    );
    await db.post.delete({ where: { id: gone.post.id } });
    await db.post.update({ where: { id: removing.post.id }, data: { deletedAt: new Date() } });
    const settled = await Promise.allSettled([
      repo.networkSucceeded(ok.post.id, 'twitter', success('a', ok.attempt)),
      repo.networkSucceeded(gone.post.id, 'twitter', success('b', gone.attempt)),
      repo.networkSucceeded(removing.post.id, 'twitter', success('c', removing.attempt)),
      repo.networkSucceeded(stale.post.id, 'twitter', success('d', stale.attempt + 1)),
      repo.networkSucceeded(noSegment.post.id, 'twitter', success('e', noSegment.attempt)),
      repo.networkSucceeded(ok.post.id, 'slack', success('f', ok.attempt, null)),
    ]);
    const answers = settled.map((r) =>
      r.status === 'fulfilled' ? (r.value?.status ?? null) : (r.reason as Error).message,
    );
    expect(answers).toEqual([
      'published',
      'Expected to update one segment row, updated none',
      null,
      null,
      'Expected to update one segment row, updated none',
      'Expected to update one post target row, updated none',
    ]);
    const rows = await db.post.findMany({
      where: { id: { in: [removing.post.id, stale.post.id, noSegment.post.id] } },
      include: { targets: true },
    });
    expect(Object.fromEntries(rows.map((r) => [r.content, [r.status, r.targets[0]?.status]]))).toEqual({
      removing: ['publishing', 'succeeded'],
      stale: ['publishing', 'succeeded'],
      'no segment': ['publishing', 'pending'],
    });
    for (const { post } of [removing, stale, noSegment]) expect(await outcomeEvents(post.id)).toHaveLength(0);
    expect(await outcomeEvents(ok.post.id)).toHaveLength(1);
  });

  it('target updates keep the columns an update leaves out, and fail for a network the post does not have', async () => {
    const repo = createPublishRepository(db);
    const { post } = await publishingPost('targets', ['twitter']);
    await repo.updateTarget(post.id, 'twitter', { status: 'failed', error: 'boom', errorKind: 'transient' });
    await repo.updateTarget(post.id, 'twitter', { status: 'unknown' });
    await expect(repo.updateTarget(post.id, 'slack', { status: 'failed', error: 'x' })).rejects.toThrow(
      /Expected to update one post target row/,
    );
    const target = await db.postTarget.findFirstOrThrow({ where: { postId: post.id, platform: 'twitter' } });
    expect(target).toMatchObject({ status: 'unknown', error: 'boom', errorKind: 'transient', attempts: 2 });
  });
});
