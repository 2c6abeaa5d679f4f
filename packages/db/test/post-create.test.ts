import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { presentPostB } from '@sps/core';
import { createDb, createPostRepository, type TDb, toPostRecord } from '../src/index.js';
import { POST_INCLUDE } from '../src/post-mapper.js';
import { createTestAccount, createTestDatabase, type TTestDatabase } from '../src/testing.js';

// Creates run as one plain-SQL statement per batch of concurrent requests: each caller's post must be
// exactly the row Prisma reads back, in its own account, with `post.scheduled` written for scheduled ones only.
describe('batched post creates', () => {
  let database: TTestDatabase;
  let db: TDb;
  beforeAll(async () => {
    database = await createTestDatabase();
    db = createDb(database.url, { poolMax: 4 });
  });
  afterAll(async () => {
    await db.$disconnect();
    await database.drop();
  });

  it('writes every concurrent create as its caller asked, events for the scheduled ones', async () => {
    const a = await createTestAccount(db);
    const b = await createTestAccount(db);
    const repo = createPostRepository(db);
    const now = new Date();
    const due = new Date(now.getTime() + 3_600_000);
    const [draftA, scheduledB, queuedA, fullB] = await Promise.all([
      repo.create(a.accountId, 'draft', { content: 'draft a', platforms: ['twitter', 'bluesky'] }, now),
      repo.create(
        b.accountId,
        'scheduled',
        { content: 'scheduled b', platforms: ['mastodon'], scheduledFor: due },
        now,
      ),
      repo.create(
        a.accountId,
        'draft',
        { content: 'queued a', platforms: ['twitter'], queueState: 'queued', countsTwitterAllowance: true },
        now,
      ),
      repo.create(
        b.accountId,
        'draft',
        {
          content: 'full b ✓ 🎉',
          platforms: ['twitter', 'linkedin'],
          media: { images: [{ url: 'https://example.com/a.png', altText: 'alt' }], video: null },
          segments: [{ content: 'second', media: null }],
          poll: null,
        },
        now,
      ),
    ]);
    for (const [created, accountId] of [
      [draftA, a.accountId],
      [scheduledB, b.accountId],
      [queuedA, a.accountId],
      [fullB, b.accountId],
    ] as const) {
      const row = await db.post.findUniqueOrThrow({ where: { id: created.id }, include: POST_INCLUDE });
      expect(row.accountId).toBe(accountId);
      // What the caller was answered is what is stored.
      expect(toPostRecord(row)).toEqual(created);
    }
    expect((await db.post.findUniqueOrThrow({ where: { id: queuedA.id } })).countsTwitterAllowance).toBe(
      true,
    );
    expect((await db.post.findUniqueOrThrow({ where: { id: draftA.id } })).countsTwitterAllowance).toBe(
      false,
    );

    const events = await db.event.findMany({ where: { accountId: { in: [a.accountId, b.accountId] } } });
    expect(events.map((e) => [e.accountId, e.type])).toEqual([[b.accountId, 'post.scheduled']]);
    expect(events[0]?.data).toEqual(JSON.parse(JSON.stringify({ post: presentPostB(scheduledB) })));
  });

  it('fails only the caller whose row cannot be written', async () => {
    const a = await createTestAccount(db);
    const repo = createPostRepository(db);
    const now = new Date();
    const results = await Promise.allSettled([
      repo.create(a.accountId, 'draft', { content: 'fine', platforms: ['twitter'] }, now),
      // An account that does not exist breaks the foreign key: that caller fails, the other is written.
      repo.create(
        '00000000-0000-4000-8000-000000000000',
        'draft',
        { content: 'orphan', platforms: ['twitter'] },
        now,
      ),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected']);
    const fine = (results[0] as PromiseFulfilledResult<{ id: string }>).value;
    expect(await db.post.findUnique({ where: { id: fine.id } })).not.toBeNull();
    expect(await db.post.count({ where: { content: 'orphan' } })).toBe(0);
  });
});
