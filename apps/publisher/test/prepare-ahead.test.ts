import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { secretBox } from '@sps/core';
import { createSocialAccountRepository } from '@sps/db';
import type { TRunningSim } from '@sps/network-sim';
import { JOBS, SCHEDULE_BACKSTOP_MS } from '@sps/queue';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from '../../api/test/harness.js';
import { waitUntil } from './support.js';

// Scheduled posts are prepared ahead of their due time (prepare job) and started from the preparing
// process's memory at the due second. What was read ahead must never be published stale: an edit, a
// delete, a disconnect or a token refresh after the post was prepared wins, and a publisher that stops
// hands its prepared posts back to their schedule jobs.

describe('prepared scheduled posts', () => {
  let api: TTestApi;
  let sim: TRunningSim;

  beforeAll(async () => {
    api = await startTestApi({ publisher: true });
    sim = api.sim!;
  });
  afterAll(() => api.close());

  async function tenant() {
    const { apiKey, accountId } = await api.account('pro');
    const socialAccountId = await api.connect(accountId, 'twitter', `prep-${accountId.slice(0, 8)}`);
    return { apiKey, accountId, socialAccountId };
  }

  async function schedule(apiKey: string, content: string, due: string): Promise<string> {
    const res = await request(api.app)
      .post('/v1/posts')
      .set(bearer(apiKey))
      .send({ content, platforms: ['twitter'], scheduled_for: due });
    expect(res.status).toBe(201);
    return res.body.id as string;
  }

  const received = (text: string) => sim.sim.postsOf('twitter').filter((p) => p.text === text);
  const post = (id: string) => api.db.post.findUnique({ where: { id }, include: { targets: true } });
  const final = async (ids: string[]) =>
    (await api.db.post.count({ where: { id: { in: ids }, status: { in: ['published', 'failed'] } } })) ===
    ids.length;

  it('starts an untouched post at its due time and honours edits, deletes, disconnects and token refreshes made after preparing', async () => {
    const [plain, edited, deleted, disconnected, refreshed, threaded] = await Promise.all([
      tenant(),
      tenant(),
      tenant(),
      tenant(),
      tenant(),
      tenant(),
    ]);
    const dueAt = Date.now() + 4_000;
    const due = new Date(dueAt).toISOString();
    // Created together: one after the other they could take longer than the 4 s on a loaded machine.
    const [plainId, editedId, deletedId, disconnectedId, refreshedId] = await Promise.all([
      schedule(plain.apiKey, `prep plain ${dueAt}`, due),
      schedule(edited.apiKey, `prep before edit ${dueAt}`, due),
      schedule(deleted.apiKey, `prep deleted ${dueAt}`, due),
      schedule(disconnected.apiKey, `prep disconnected ${dueAt}`, due),
      schedule(refreshed.apiKey, `prep refreshed ${dueAt}`, due),
    ]);
    const ids = {
      plain: plainId as string,
      edited: editedId as string,
      deleted: deletedId as string,
      disconnected: disconnectedId as string,
      refreshed: refreshedId as string,
    };
    const thread = await request(api.app)
      .post('/v1/posts')
      .set(bearer(threaded.apiKey))
      .send({
        content: `prep thread 1 ${dueAt}`,
        platforms: ['twitter'],
        scheduled_for: due,
        segments: [{ content: `prep thread 2 ${dueAt}` }],
      });
    expect(thread.status).toBe(201);
    // All five are due within the minute, so their prepare jobs run at once.
    await waitUntil(
      'the posts to be prepared',
      async () => api.publisher!.context.prepared.size() === 5,
      3_000,
    );

    const put = await request(api.app)
      .put(`/v1/posts/${ids.edited}`)
      .set(bearer(edited.apiKey))
      .send({ content: `prep after edit ${dueAt}` });
    expect(put.status).toBe(200);
    expect(
      (await request(api.app).delete(`/v1/posts/${ids.deleted}`).set(bearer(deleted.apiKey))).status,
    ).toBe(204);
    const socialAccounts = createSocialAccountRepository(api.db);
    await socialAccounts.disconnect(disconnected.accountId, disconnected.socialAccountId, 'manual');
    // A token refresh as the token repository stores one: new sealed credentials, version bumped.
    await api.db.socialAccount.update({
      where: { id: refreshed.socialAccountId },
      data: {
        credentialsEncrypted: secretBox.sealV1(
          JSON.stringify({ token: 'token-after-refresh' }),
          api.env.encryptionKey,
        ),
        credentialsVersion: { increment: 1 },
      },
    });
    expect(Date.now()).toBeLessThan(dueAt);

    const live = [ids.plain, ids.edited, ids.disconnected, ids.refreshed, thread.body.id as string];
    await waitUntil('the posts to be final', () => final(live), 20_000);

    // Untouched: published once, not before its time, started by the prepared path (the backstop
    // schedule job is still waiting for due + SCHEDULE_BACKSTOP_MS).
    const plainPost = await post(ids.plain);
    expect(plainPost?.status).toBe('published');
    expect(plainPost!.publishedAt!.getTime()).toBeGreaterThanOrEqual(dueAt);
    expect(received(`prep plain ${dueAt}`)).toHaveLength(1);
    expect(Date.parse(received(`prep plain ${dueAt}`)[0]!.at)).toBeGreaterThanOrEqual(dueAt);
    const backstop = await api.queues.schedule.getJob(JOBS.schedule.jobId({ postId: ids.plain, dueAt }));
    expect(await backstop?.getState()).toBe('delayed');
    expect(backstop!.timestamp + backstop!.opts.delay!).toBeGreaterThanOrEqual(
      dueAt + SCHEDULE_BACKSTOP_MS - 1_000,
    );

    // A thread: both parts once, the second replying to the first.
    const [first] = received(`prep thread 1 ${dueAt}`);
    expect(received(`prep thread 1 ${dueAt}`)).toHaveLength(1);
    expect(received(`prep thread 2 ${dueAt}`).map((p) => p.replyTo)).toEqual([first!.remoteId]);

    // Edited after preparing: the edited text goes out, the prepared one never does.
    expect((await post(ids.edited))?.status).toBe('published');
    expect(received(`prep after edit ${dueAt}`)).toHaveLength(1);
    expect(received(`prep before edit ${dueAt}`)).toHaveLength(0);

    // Deleted after preparing: nothing is sent.
    expect(received(`prep deleted ${dueAt}`)).toHaveLength(0);
    expect(await post(ids.deleted)).toBeNull();

    // Disconnected after preparing: the ordinary checks run again and fail the post without sending.
    const failed = await post(ids.disconnected);
    expect(failed?.status).toBe('failed');
    // The ordinary path's reason (checked before anything starts), not the publish job's "no longer connected".
    expect(failed?.targets[0]?.error).toMatch(/No active twitter account is connected/);
    expect(failed?.targets[0]?.errorKind).toBe('rejected');
    expect(received(`prep disconnected ${dueAt}`)).toHaveLength(0);

    // Refreshed after preparing: sent once, with the new token.
    expect((await post(ids.refreshed))?.status).toBe('published');
    expect(received(`prep refreshed ${dueAt}`)).toHaveLength(1);
    const call = sim.sim.requests.find(
      (r) => r.path.endsWith('/2/tweets') && (r.body as { text?: string }).text === `prep refreshed ${dueAt}`,
    );
    expect(call?.headers.authorization).toBe('Bearer token-after-refresh');
  }, 60_000);

  it('a prepared post whose network asks for a retry continues as an ordinary publish job and goes out once', async () => {
    const { apiKey } = await tenant();
    const dueAt = Date.now() + 3_000;
    const text = `prep retried ${dueAt}`;
    const id = await schedule(apiKey, text, new Date(dueAt).toISOString());
    await waitUntil(
      'the post to be prepared',
      async () => api.publisher!.context.prepared.size() === 1,
      3_000,
    );
    sim.sim.addFault({ platform: 'twitter', kind: 'server_error', remaining: 1, pathIncludes: '/2/tweets' });

    await waitUntil('the post to be final', () => final([id]), 20_000);
    expect((await post(id))?.status).toBe('published');
    expect(received(text)).toHaveLength(1);
    // The first try ran in the preparing process; the retry was the publish job of the same attempt.
    const attempt = (await post(id))!.publishAttempt;
    const job = await api.queues.publish.getJob(JOBS.publish.jobId({ postId: id, attempt }));
    expect(await job?.getState()).toBe('completed');
    const calls = sim.sim.requests.filter(
      (r) => r.path.endsWith('/2/tweets') && (r.body as { text?: string }).text === text,
    );
    expect(calls).toHaveLength(2);
  }, 60_000);

  it('a publisher that stops before the due time hands its prepared posts back to their schedule jobs', async () => {
    const { apiKey } = await tenant();
    const dueAt = Date.now() + 5_000;
    const id = await schedule(apiKey, `prep handed back ${dueAt}`, new Date(dueAt).toISOString());
    await waitUntil(
      'the post to be prepared',
      async () => api.publisher!.context.prepared.size() === 1,
      3_000,
    );

    const stoppedAt = Date.now();
    await api.stopPublisher();
    // The backstop now fires at the due time rather than SCHEDULE_BACKSTOP_MS later.
    const job = await api.queues.schedule.getJob(JOBS.schedule.jobId({ postId: id, dueAt }));
    expect(await job?.getState()).toBe('delayed');
    // Its delay was set again from the stop (it was due + SCHEDULE_BACKSTOP_MS from its creation).
    expect(job!.delay).toBeLessThanOrEqual(dueAt - stoppedAt);

    await api.startPublisher();
    await waitUntil('the post to be published', () => final([id]), SCHEDULE_BACKSTOP_MS / 2);
    const done = await post(id);
    expect(done?.status).toBe('published');
    expect(done!.publishedAt!.getTime()).toBeGreaterThanOrEqual(dueAt);
    expect(received(`prep handed back ${dueAt}`)).toHaveLength(1);
    expect((await api.queues.schedule.getJob(job!.id!))?.returnvalue).toMatchObject({ status: 'started' });
  }, 60_000);
});

describe('a prepared post published in-process while its network is slow', () => {
  let api: TTestApi;

  beforeAll(async () => {
    // The reconciler runs every half second and takes a post untouched for 10 s for one whose job was lost.
    api = await startTestApi({
      publisher: true,
      stuckAfterMs: 10_000,
      reconcileEveryMs: 500,
      networkTimeoutMs: 20_000,
    });
  });
  afterAll(() => api.close());

  it('is touched while it runs, so the reconciler never sends it a second time', async () => {
    const { apiKey, accountId } = await api.account('pro');
    await api.connect(accountId, 'twitter');
    const dueAt = Date.now() + 3_000;
    const text = `prep slow ${dueAt}`;
    const res = await request(api.app)
      .post('/v1/posts')
      .set(bearer(apiKey))
      .send({ content: text, platforms: ['twitter'], scheduled_for: new Date(dueAt).toISOString() });
    expect(res.status).toBe(201);
    const id = res.body.id as string;
    await waitUntil(
      'the post to be prepared',
      async () => api.publisher!.context.prepared.size() === 1,
      3_000,
    );
    // Longer than the stuck threshold.
    api.sim!.sim.addFault({ platform: 'twitter', kind: 'slow', delayMs: 13_000, remaining: 1 });

    // One read per poll: two reads could see 'scheduled' and then 'publishing' and take that for final.
    await waitUntil(
      'the post to be final',
      async () => {
        const { status } = await api.db.post.findUniqueOrThrow({ where: { id } });
        return status !== 'publishing' && status !== 'scheduled';
      },
      40_000,
      200,
    );
    const done = await api.db.post.findUniqueOrThrow({ where: { id }, include: { targets: true } });
    expect(done.status).toBe('published');
    expect(done.targets.map((t) => t.status)).toEqual(['succeeded']);
    expect(api.sim!.sim.postsOf('twitter').filter((p) => p.text === text)).toHaveLength(1);
    // No publish job was ever made for it: the reconciler left the live publish alone.
    expect(
      await api.queues.publish.getJob(JOBS.publish.jobId({ postId: id, attempt: done.publishAttempt })),
    ).toBeUndefined();
  }, 120_000);
});

describe('prepared posts waiting in memory for their lanes', () => {
  let api: TTestApi;

  beforeAll(async () => {
    // One publish per account at once: the account's other due posts wait in the preparing process.
    api = await startTestApi({
      publisher: true,
      networkTimeoutMs: 20_000,
      lanes: { networkShare: 0.25, accountCap: 1, leaseMs: 30_000, retryMs: 50, waitMs: 120_000 },
    });
  });
  afterAll(() => api.close());

  it('a publisher stopped while posts wait for a lane hands them to publish jobs: each goes out once', async () => {
    const { apiKey, accountId } = await api.account('pro');
    await api.connect(accountId, 'twitter');
    const dueAt = Date.now() + 3_000;
    const texts = [0, 1, 2, 3].map((i) => `prep lane ${i} ${dueAt}`);
    const ids: string[] = [];
    for (const content of texts) {
      const res = await request(api.app)
        .post('/v1/posts')
        .set(bearer(apiKey))
        .send({ content, platforms: ['twitter'], scheduled_for: new Date(dueAt).toISOString() });
      expect(res.status).toBe(201);
      ids.push(res.body.id as string);
    }
    await waitUntil(
      'the posts to be prepared',
      async () => api.publisher!.context.prepared.size() === 4,
      3_000,
    );
    // The first post to take the account's place holds it for 4 s; the three others wait for it.
    api.sim!.sim.addFault({ platform: 'twitter', kind: 'slow', delayMs: 4_000, remaining: 1 });
    const tweetCalls = () =>
      api.sim!.sim.requests.filter(
        (r) => r.path.endsWith('/2/tweets') && texts.includes((r.body as { text?: string }).text ?? ''),
      ).length;
    await waitUntil(
      'every post started, one of them sent',
      async () =>
        (await api.db.post.count({ where: { id: { in: ids }, status: 'publishing' } })) === 4 &&
        tweetCalls() === 1,
      20_000,
    );
    await api.stopPublisher();
    // Stopped: the sent post is done; the waiting ones are publish jobs in Redis (nothing only in memory).
    const posts = await api.db.post.findMany({ where: { id: { in: ids } } });
    expect(posts.filter((p) => p.status === 'published')).toHaveLength(1);
    const handedBack = posts.filter((p) => p.status === 'publishing');
    expect(handedBack).toHaveLength(3);
    for (const p of handedBack) {
      const job = await api.queues.publish.getJob(
        JOBS.publish.jobId({ postId: p.id, attempt: p.publishAttempt }),
      );
      expect(['delayed', 'waiting']).toContain(await job?.getState());
    }
    expect(tweetCalls()).toBe(1);

    await api.startPublisher();
    await waitUntil(
      'every post to be published',
      async () => (await api.db.post.count({ where: { id: { in: ids }, status: 'published' } })) === 4,
      30_000,
    );
    for (const text of texts)
      expect(api.sim!.sim.postsOf('twitter').filter((p) => p.text === text)).toHaveLength(1);
  }, 90_000);
});
