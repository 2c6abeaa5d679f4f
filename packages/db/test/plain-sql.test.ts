import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  createDb,
  createPostRepository,
  createPublishRepository,
  createSocialAccountRepository,
  createWebhookDeliveryRepository,
  type TDb,
  toPostRecord,
} from '../src/index.js';
import { createTestAccount, createTestDatabase, type TTestDatabase } from '../src/testing.js';

// The hot paths read and write with plain SQL on Prisma's pool; what they return must be exactly what the
// Prisma-based reads return, and batching must never mix up whose row is whose.
describe('plain-SQL hot paths', () => {
  let database: TTestDatabase;
  let db: TDb;
  let accountId: string;
  beforeAll(async () => {
    database = await createTestDatabase();
    db = createDb(database.url, { poolMax: 4 });
    ({ accountId } = await createTestAccount(db));
  });
  afterAll(async () => {
    await db.$disconnect();
    await database.drop();
  });

  async function connected(platform: 'twitter' | 'mastodon' | 'bluesky') {
    return createSocialAccountRepository(db).connect({
      accountId,
      platform,
      accountName: `${platform}-user`,
      externalId: null,
      instanceUrl: null,
      credentialsEncrypted: 'sealed',
    });
  }

  const prismaRead = async (id: string) =>
    toPostRecord(
      await db.post.findUniqueOrThrow({
        where: { id },
        include: { targets: { orderBy: { createdAt: 'asc' } } },
      }),
    );

  it('reads a post (JSON columns, schedule, targets) exactly as Prisma does; unknown, foreign or malformed ids are null', async () => {
    const posts = createPostRepository(db);
    const created = await posts.create(
      accountId,
      'scheduled',
      {
        content: 'plain sql',
        platforms: ['mastodon', 'twitter', 'bluesky'],
        scheduledFor: new Date('2030-01-02T03:04:05.678Z'),
        media: { images: [{ url: 'https://x.test/a.png', altText: 'a' }], video: null },
        segments: [{ content: 'second', media: null }],
        poll: null,
      },
      new Date(),
    );
    expect(await posts.find(accountId, created.id)).toEqual(await prismaRead(created.id));
    // Ids are case-insensitive, also when batched reads match answers to callers.
    const [upper, lower] = await Promise.all([
      posts.find(accountId.toUpperCase(), created.id.toUpperCase()),
      posts.find(accountId, created.id),
    ]);
    expect(upper).toEqual(lower);
    expect(upper?.id).toBe(created.id);
    expect(await posts.find(accountId, '00000000-0000-4000-8000-000000000000')).toBeNull();
    expect(await posts.find('00000000-0000-4000-8000-000000000000', created.id)).toBeNull();
    expect(await posts.find(accountId, 'not-a-uuid')).toBeNull();
  });

  it('starts a publish in one statement: targets in the order the post lists its networks, the same post a read shows', async () => {
    const accounts = {
      twitter: (await connected('twitter')).id,
      mastodon: (await connected('mastodon')).id,
      bluesky: (await connected('bluesky')).id,
    };
    const posts = createPostRepository(db);
    const publishing = createPublishRepository(db);
    const post = await posts.create(
      accountId,
      'draft',
      { content: 'begin', platforms: ['mastodon', 'twitter', 'bluesky'] },
      new Date(),
    );
    const stale = await publishing.begin({
      accountId,
      postId: post.id,
      from: ['draft'],
      accounts,
      expectUpdatedAt: new Date(post.updatedAt.getTime() - 1),
    });
    expect(stale).toEqual({ kind: 'changed' });

    const started = await publishing.begin({
      accountId,
      postId: post.id,
      from: ['draft'],
      accounts,
      expectUpdatedAt: post.updatedAt,
      preFailed: { bluesky: { error: 'allowance used up', errorKind: 'rejected' } },
    });
    if (started.kind !== 'started') throw new Error(`not started: ${started.kind}`);
    expect(started.attempt).toBe(1);
    expect(started.post.targets.map((t) => [t.platform, t.status, t.error])).toEqual([
      ['mastodon', 'pending', null],
      ['twitter', 'pending', null],
      ['bluesky', 'failed', 'allowance used up'],
    ]);
    expect(started.post).toEqual(await prismaRead(post.id));
    expect(await publishing.begin({ accountId, postId: post.id, from: ['draft'], accounts })).toEqual({
      kind: 'not_publishable',
      status: 'publishing',
    });
    expect(await publishing.begin({ accountId, postId: 'nope', from: ['draft'], accounts })).toEqual({
      kind: 'not_found',
    });

    const loaded = await publishing.loadForPublish(post.id);
    expect(loaded?.post).toEqual(started.post);
    expect(loaded?.targetAccounts).toEqual(accounts);
    expect(loaded?.accounts.map((a) => a.id).sort()).toEqual(Object.values(accounts).sort());
  });

  it('batches concurrent webhook delivery reads and successes without mixing them up', async () => {
    const webhook = await db.webhook.create({
      data: { accountId, url: 'https://hooks.test/a', events: ['post.published'], secretEncrypted: 'x' },
    });
    await db.webhook.update({ where: { id: webhook.id }, data: { consecutiveFailures: 3 } });
    const events = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        db.event.create({ data: { accountId, type: 'post.published', data: { n: i } } }),
      ),
    );
    const deliveries = await Promise.all(
      events.map((e) => db.webhookDelivery.create({ data: { webhookId: webhook.id, eventId: e.id } })),
    );
    const repo = createWebhookDeliveryRepository(db);
    const unknown = '00000000-0000-4000-8000-000000000000';
    const ids = [...deliveries.map((d) => d.id), unknown, 'not-a-uuid'];
    const loaded = await Promise.all(ids.map((id) => repo.loadForAttempt(id)));
    deliveries.forEach((d, i) => {
      expect(loaded[i]?.id).toBe(d.id);
      expect(loaded[i]?.event).toEqual({
        id: events[i]?.id,
        type: 'post.published',
        data: { n: i },
        createdAt: events[i]?.createdAt,
      });
    });
    expect(loaded.slice(-2)).toEqual([null, null]);

    // The first half already succeeded: recording them again is refused, the rest goes through.
    const half = deliveries.slice(0, 15);
    expect(await Promise.all(half.map((d) => repo.recordSuccess(d.id, webhook.id, 200)))).toEqual(
      half.map(() => true),
    );
    // A delivery twice in one batch: once done, the second call is told it was not open any more.
    const last = deliveries[29];
    if (!last) throw new Error('no delivery');
    const twice = await Promise.all([
      repo.recordSuccess(last.id, webhook.id, 200),
      repo.recordSuccess(last.id, webhook.id, 200),
    ]);
    expect(twice).toEqual([true, false]);
    const all = await Promise.all(
      deliveries.map((d, i) => repo.recordSuccess(d.id, webhook.id, 200 + (i % 5))),
    );
    expect(all).toEqual(deliveries.map((_, i) => i >= 15 && i < 29));
    const rows = await db.webhookDelivery.findMany({ where: { webhookId: webhook.id } });
    expect(rows.every((r) => r.status === 'succeeded' && r.attempts === 1)).toBe(true);
    expect(rows.find((r) => r.id === deliveries[20]?.id)?.lastStatusCode).toBe(200);
    expect(rows.find((r) => r.id === deliveries[16]?.id)?.lastStatusCode).toBe(201);
    expect((await db.webhook.findUniqueOrThrow({ where: { id: webhook.id } })).consecutiveFailures).toBe(0);
  });

  it('a connection lost in the middle of a plain-SQL transaction rejects the caller and leaves the process and pool healthy', async () => {
    const { inSqlTransaction, sqlOf } = await import('../src/client.js');
    const outcome = inSqlTransaction(db, async (client) => {
      const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      await sqlOf(db).query('SELECT pg_terminate_backend($1)', [rows[0]?.pid]);
      await new Promise((resolve) => setTimeout(resolve, 100));
      await client.query('SELECT 1');
    });
    await expect(outcome).rejects.toThrow();
    // The broken connection was not given back: the next statements work.
    for (let i = 0; i < 5; i += 1)
      expect((await sqlOf(db).query('SELECT 1 AS one')).rows[0]).toEqual({ one: 1 });
  });

  it('ends its pool on $disconnect when only plain SQL ever ran (no idle connections keep a process alive)', async () => {
    const other = createDb(database.url, { poolMax: 1 });
    expect(
      await createPostRepository(other).find(accountId, '00000000-0000-4000-8000-000000000000'),
    ).toBeNull();
    await other.$disconnect();
    const { SQL_POOL } = await import('../src/client.js');
    const pool = (other as unknown as Record<symbol, { ended: boolean; totalCount: number }>)[SQL_POOL];
    expect(pool?.ended).toBe(true);
    expect(pool?.totalCount).toBe(0);
  });
});
