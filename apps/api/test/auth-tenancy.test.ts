import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { generateApiKey } from '@sps/core';
import { createAccountRepository } from '@sps/db';
import request, { type Response } from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';

function expectErrorA(res: Response, status: number): { error: string; fix?: string; details?: unknown } {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const body = res.body as { error: string; fix?: string; details?: unknown };
  expect(typeof body.error).toBe('string');
  expect(body.error.length).toBeGreaterThan(0);
  for (const key of Object.keys(body)) expect(['error', 'fix', 'details']).toContain(key);
  if (body.fix !== undefined) expect(typeof body.fix).toBe('string');
  return body;
}

function expectErrorB(
  res: Response,
  status: number,
  code: string,
): { error: string; code: string; details: object } {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const body = res.body as { error: string; code: string; details: object };
  expect(Object.keys(body).sort()).toEqual(['code', 'details', 'error']);
  expect(typeof body.error).toBe('string');
  expect(body.code).toBe(code);
  expect(typeof body.details).toBe('object');
  expect(body.details).not.toBeNull();
  expect(Array.isArray(body.details)).toBe(false);
  return body;
}

/** Retries until the request answers `status` (pub/sub delivery is asynchronous), at most ~3 s. */
async function eventually(send: () => Promise<Response>, status: number): Promise<Response> {
  let res = await send();
  for (let i = 0; i < 60 && res.status !== status; i++) {
    await new Promise((r) => setTimeout(r, 50));
    res = await send();
  }
  return res;
}

const NEW_POST = { content: 'hello', platforms: ['twitter'] };

describe('authentication and tenancy', () => {
  let api: TTestApi;
  let key: string;

  beforeAll(async () => {
    api = await startTestApi();
    ({ apiKey: key } = await api.account('pro'));
  });
  afterAll(() => api.close());

  describe('presenting a key', () => {
    it('accepts Bearer on both variants', async () => {
      expect((await request(api.app).get('/api/posts').set(bearer(key))).status).toBe(200);
      expect((await request(api.app).get('/v1/posts').set(bearer(key))).status).toBe(200);
      expect((await request(api.app).get('/api/posts').set('Authorization', `bearer ${key}`)).status).toBe(
        200,
      );
    });

    it('accepts x-api-key on A', async () => {
      const res = await request(api.app).get('/api/posts').set('x-api-key', key);
      expect(res.status).toBe(200);
      const created = await request(api.app).post('/api/posts').set('x-api-key', key).send(NEW_POST);
      expect(created.status).toBe(201);
    });

    it('answers 401 in B shape to x-api-key alone on B', async () => {
      expectErrorB(await request(api.app).get('/v1/posts').set('x-api-key', key), 401, 'unauthorized');
      expectErrorB(
        await request(api.app).post('/v1/posts').set('x-api-key', key).send(NEW_POST),
        401,
        'unauthorized',
      );
    });

    it('answers 401 to a missing key in each variant shape, with a fix on A', async () => {
      const a = expectErrorA(await request(api.app).get('/api/posts'), 401);
      expect(a.fix).toMatch(/Bearer/);
      expect(a.fix).toMatch(/x-api-key/);
      expectErrorB(await request(api.app).get('/v1/posts'), 401, 'unauthorized');
    });

    it.each([
      ['Basic scheme', { Authorization: 'Basic dXNlcjpwYXNz' }],
      ['empty Bearer', { Authorization: 'Bearer ' }],
      ['Bearer with two tokens', { Authorization: 'Bearer abc def' }],
      ['a bare key without scheme', { Authorization: 'sps_live_abc' }],
      ['a key without the prefix', { Authorization: 'Bearer 0123456789abcdef0123456789abcdef' }],
      ['a truncated key', { Authorization: 'Bearer sps_live_abc' }],
    ])('answers 401 to a malformed key (%s) in each variant shape', async (_label, headers) => {
      expectErrorA(await request(api.app).get('/api/posts').set(headers), 401);
      expectErrorB(await request(api.app).get('/v1/posts').set(headers), 401, 'unauthorized');
    });

    it('answers 401 to a malformed x-api-key on A', async () => {
      expectErrorA(await request(api.app).get('/api/posts').set('x-api-key', 'nope'), 401);
      expectErrorA(await request(api.app).get('/api/posts').set('x-api-key', key.slice(0, -1)), 401);
    });

    it('answers 401 to a well-formed but unknown key in each variant shape', async () => {
      const unknown = generateApiKey().key;
      expectErrorA(await request(api.app).get('/api/posts').set(bearer(unknown)), 401);
      expectErrorA(await request(api.app).get('/api/posts').set('x-api-key', unknown), 401);
      expectErrorB(await request(api.app).get('/v1/posts').set(bearer(unknown)), 401, 'unauthorized');
    });

    it('needs a key on every Variant A endpoint, before reading the body', async () => {
      const id = randomUUID();
      const calls = [
        request(api.app).get('/api/posts'),
        request(api.app).post('/api/posts').send(NEW_POST),
        request(api.app).post('/api/posts').set('Content-Type', 'application/json').send('{bad json'),
        request(api.app).get(`/api/posts/${id}`),
        request(api.app).put(`/api/posts/${id}`).send(NEW_POST),
        request(api.app).delete(`/api/posts/${id}`),
        request(api.app).post(`/api/posts/${id}/publish`),
        request(api.app).post(`/api/posts/${id}/approve`),
        request(api.app).post(`/api/posts/${id}/retry`),
        request(api.app).get('/api/accounts'),
        request(api.app).get('/api/queue-settings'),
        request(api.app).put('/api/queue-settings').send({ intervalHours: 2 }),
        request(api.app).get('/api/no-such-route'),
      ];
      for (const res of await Promise.all(calls)) expectErrorA(res, 401);
    });

    it('needs a key on every Variant B post endpoint', async () => {
      const id = randomUUID();
      const calls = [
        request(api.app).get('/v1/posts'),
        request(api.app).post('/v1/posts').send(NEW_POST),
        request(api.app).get(`/v1/posts/${id}`),
        request(api.app).put(`/v1/posts/${id}`).send({ content: 'x' }),
        request(api.app).delete(`/v1/posts/${id}`),
        request(api.app).get('/v1/accounts'),
      ];
      for (const res of await Promise.all(calls)) expectErrorB(res, 401, 'unauthorized');
    });
  });

  describe('revoked keys', () => {
    it('stop working at once when the key hash is published on the invalidation channel', async () => {
      const acct = await api.account('pro');
      // Warm the verifier's cache on both variants.
      expect((await request(api.app).get('/api/posts').set(bearer(acct.apiKey))).status).toBe(200);
      expect((await request(api.app).get('/v1/posts').set(bearer(acct.apiKey))).status).toBe(200);
      const revoked = await createAccountRepository(api.db).revokeApiKey(acct.keyId);
      expect(revoked).not.toBeNull();
      await api.redis.publish(`${api.env.QUEUE_PREFIX}:auth-invalidate`, revoked!.hash);
      const a = await eventually(() => request(api.app).get('/api/posts').set(bearer(acct.apiKey)), 401);
      expectErrorA(a, 401);
      expectErrorA(await request(api.app).get('/api/posts').set('x-api-key', acct.apiKey), 401);
      expectErrorB(await request(api.app).get('/v1/posts').set(bearer(acct.apiKey)), 401, 'unauthorized');
      // Other keys keep working.
      expect((await request(api.app).get('/api/posts').set(bearer(key))).status).toBe(200);
    });

    it("stop working at once after a '*' invalidation", async () => {
      const acct = await api.account('pro');
      expect((await request(api.app).get('/api/posts').set('x-api-key', acct.apiKey)).status).toBe(200);
      await createAccountRepository(api.db).revokeApiKey(acct.keyId);
      await api.redis.publish(`${api.env.QUEUE_PREFIX}:auth-invalidate`, '*');
      expectErrorA(
        await eventually(() => request(api.app).get('/api/posts').set('x-api-key', acct.apiKey), 401),
        401,
      );
      expectErrorB(await request(api.app).get('/v1/posts').set(bearer(acct.apiKey)), 401, 'unauthorized');
      expect((await request(api.app).get('/v1/posts').set(bearer(key))).status).toBe(200);
    });

    it('are refused when revoked before first use', async () => {
      const acct = await api.account('pro');
      await createAccountRepository(api.db).revokeApiKey(acct.keyId);
      expectErrorA(await request(api.app).get('/api/posts').set(bearer(acct.apiKey)), 401);
      expectErrorB(await request(api.app).get('/v1/posts').set(bearer(acct.apiKey)), 401, 'unauthorized');
    });
  });

  describe('plans', () => {
    it("answers 403 with a fix to Variant A create on plan 'none', storing nothing", async () => {
      const acct = await api.account('none');
      const body = expectErrorA(
        await request(api.app).post('/api/posts').set(bearer(acct.apiKey)).send(NEW_POST),
        403,
      );
      expect(body.fix).toEqual(expect.any(String));
      expect(body.fix!.length).toBeGreaterThan(0);
      const list = await request(api.app).get('/api/posts').set(bearer(acct.apiKey));
      expect(list.status).toBe(200);
      expect(list.body.posts).toEqual([]);
    });

    it('lets every paid plan create', async () => {
      for (const plan of ['free', 'starter', 'pro'] as const) {
        const acct = await api.account(plan);
        expect(
          (await request(api.app).post('/api/posts').set(bearer(acct.apiKey)).send(NEW_POST)).status,
        ).toBe(201);
      }
    });
  });

  describe('tenancy', () => {
    let mine: string;
    let theirKey: string;
    let theirPostId: string;

    beforeAll(async () => {
      const owner = await api.account('pro');
      theirKey = owner.apiKey;
      const created = await request(api.app)
        .post('/api/posts')
        .set(bearer(theirKey))
        .send({ ...NEW_POST, content: 'theirs' });
      expect(created.status).toBe(201);
      theirPostId = created.body.post.id as string;
      const own = await request(api.app)
        .post('/api/posts')
        .set(bearer(key))
        .send({ ...NEW_POST, content: 'mine' });
      mine = own.body.post.id as string;
    });

    it("answers 404 to another account's post on GET, PUT and DELETE in A", async () => {
      expectErrorA(await request(api.app).get(`/api/posts/${theirPostId}`).set(bearer(key)), 404);
      expectErrorA(
        await request(api.app).put(`/api/posts/${theirPostId}`).set(bearer(key)).send(NEW_POST),
        404,
      );
      expectErrorA(await request(api.app).put(`/api/posts/${theirPostId}`).set(bearer(key)).send({}), 404);
      expectErrorA(await request(api.app).delete(`/api/posts/${theirPostId}`).set(bearer(key)), 404);
      expectErrorA(
        await request(api.app).delete(`/api/posts/${theirPostId}?deleteFromPlatforms=false`).set(bearer(key)),
        404,
      );
    });

    it("answers 404 to another account's post on GET, PUT and DELETE in B", async () => {
      expectErrorB(await request(api.app).get(`/v1/posts/${theirPostId}`).set(bearer(key)), 404, 'not_found');
      expectErrorB(
        await request(api.app).put(`/v1/posts/${theirPostId}`).set(bearer(key)).send({ content: 'x' }),
        404,
        'not_found',
      );
      expectErrorB(
        await request(api.app).delete(`/v1/posts/${theirPostId}`).set(bearer(key)),
        404,
        'not_found',
      );
    });

    it("leaves the other account's post untouched and never lists it", async () => {
      const owner = await request(api.app).get(`/api/posts/${theirPostId}`).set(bearer(theirKey));
      expect(owner.status).toBe(200);
      expect(owner.body.post.content).toBe('theirs');
      const listA = await request(api.app).get('/api/posts').set(bearer(key));
      const idsA = (listA.body.posts as { id: string }[]).map((p) => p.id);
      expect(idsA).toContain(mine);
      expect(idsA).not.toContain(theirPostId);
      const listB = await request(api.app).get('/v1/posts?limit=100').set(bearer(key));
      expect((listB.body.posts as { id: string }[]).map((p) => p.id)).not.toContain(theirPostId);
      const theirList = await request(api.app).get('/api/posts').set(bearer(theirKey));
      expect((theirList.body.posts as { id: string }[]).map((p) => p.id)).toEqual([theirPostId]);
    });

    it('answers 404 to a non-UUID id in both variants', async () => {
      for (const id of ['abc', '123', `${theirPostId}x`, "' OR 1=1 --"]) {
        const path = encodeURIComponent(id);
        expectErrorA(await request(api.app).get(`/api/posts/${path}`).set(bearer(key)), 404);
        expectErrorA(await request(api.app).put(`/api/posts/${path}`).set(bearer(key)).send(NEW_POST), 404);
        expectErrorA(await request(api.app).delete(`/api/posts/${path}`).set(bearer(key)), 404);
        expectErrorB(await request(api.app).get(`/v1/posts/${path}`).set(bearer(key)), 404, 'not_found');
        expectErrorB(
          await request(api.app).put(`/v1/posts/${path}`).set(bearer(key)).send({ content: 'x' }),
          404,
          'not_found',
        );
        expectErrorB(await request(api.app).delete(`/v1/posts/${path}`).set(bearer(key)), 404, 'not_found');
      }
    });
  });
});
