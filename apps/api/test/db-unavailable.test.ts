import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createPostRepository, type TDb } from '@sps/db';
import { failingWrites, unreachableDbError } from '@sps/db/testing';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';

// A busy or unreachable PostgreSQL is not the caller's mistake and not a bug: both variants answer 503 in
// their own shape with Retry-After, and nothing the caller did not get an answer for stays behind.
describe('database unavailable', () => {
  let api: TTestApi;
  let key: string;
  /** A real error of the pg driver: what a lost database throws. */
  let dbError: unknown;
  let failWrites = false;

  // Transactions, raw statements and the plain-SQL publish path fail (model reads keep working, so the
  // test can look at what was left behind).
  const wrap = (db: TDb): TDb => failingWrites(db, dbError, () => failWrites);

  beforeAll(async () => {
    dbError = await unreachableDbError();
    expect(dbError).toBeDefined();
    api = await startTestApi({ wrapApiDb: wrap });
    const account = await api.account('pro');
    key = account.apiKey;
    await api.connect(account.accountId, 'twitter');
  });
  afterAll(() => api.close());

  it('Variant B publish: 503 {error, code, details} with Retry-After; the post stays a draft', async () => {
    const created = await request(api.app)
      .post('/v1/posts')
      .set(bearer(key))
      .send({ content: 'db down', platforms: ['twitter'] });
    expect(created.status).toBe(201);
    failWrites = true;
    const res = await request(api.app).post(`/v1/posts/${created.body.id}/publish`).set(bearer(key));
    failWrites = false;
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('2');
    expect(res.body).toEqual({
      error: expect.any(String),
      code: 'service_unavailable',
      details: { fix: expect.any(String) },
    });
    const after = await request(api.app).get(`/v1/posts/${created.body.id}`).set(bearer(key));
    expect(after.body.status).toBe('draft');
  });

  it('Variant A create with published: true: 503 {error, fix} and no post left behind', async () => {
    const before = await request(api.app).get('/api/posts').set(bearer(key));
    failWrites = true;
    const res = await request(api.app)
      .post('/api/posts')
      .set(bearer(key))
      .send({ content: 'db down in A', platforms: ['twitter'], published: true });
    failWrites = false;
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('2');
    expect(res.body).toEqual({ error: expect.any(String), fix: expect.any(String) });
    const after = await request(api.app).get('/api/posts').set(bearer(key));
    expect(after.body.posts).toHaveLength(before.body.posts.length);
  });

  it('undoing a create never removes a post that started publishing', async () => {
    const created = await request(api.app)
      .post('/v1/posts')
      .set(bearer(key))
      .send({ content: 'started after all', platforms: ['twitter'] });
    const accountId = (await api.db.post.findUniqueOrThrow({ where: { id: created.body.id } })).accountId;
    const repo = createPostRepository(api.db);
    expect(
      (await request(api.app).post(`/v1/posts/${created.body.id}/publish`).set(bearer(key))).status,
    ).toBe(200);
    expect(await repo.deleteUntouchedDraft(accountId, created.body.id)).toBe(false);
    expect(await api.db.post.count({ where: { id: created.body.id } })).toBe(1);
    const draft = await request(api.app)
      .post('/v1/posts')
      .set(bearer(key))
      .send({ content: 'x', platforms: ['twitter'] });
    expect(await repo.deleteUntouchedDraft(accountId, draft.body.id)).toBe(true);
  });
});
