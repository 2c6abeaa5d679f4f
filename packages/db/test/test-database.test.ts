import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createDb, createPostRepository, type TDb } from '../src/index.js';
import { createTestAccount, createTestDatabase, type TTestDatabase } from '../src/testing.js';

describe('test databases', () => {
  let database: TTestDatabase;
  let db: TDb;
  beforeAll(async () => {
    database = await createTestDatabase();
    db = createDb(database.url);
  });
  afterAll(async () => {
    await db.$disconnect();
    await database.drop();
  });

  it('clones the migrated template and round-trips a post with JSON columns', async () => {
    const { accountId } = await createTestAccount(db);
    const posts = createPostRepository(db);
    const created = await posts.create(
      accountId,
      'draft',
      {
        content: 'hello',
        platforms: ['twitter'],
        media: { images: [{ url: 'https://x.test/a.png' }], video: null },
        segments: null,
      },
      new Date(),
    );
    const found = await posts.find(accountId, created.id);
    expect(found?.media).toEqual({ images: [{ url: 'https://x.test/a.png' }], video: null });
    expect(found?.segments).toBeNull();
    expect(await posts.find('00000000-0000-0000-0000-000000000000', created.id)).toBeNull();
  });
});
