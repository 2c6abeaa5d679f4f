import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { hashPassword, verifyPassword } from '@sps/core';
import { createOwnerRepository } from '@sps/db';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';

const PASSWORD = 'correct horse battery';

/** Signs in and returns the agent (which keeps the cookie) and the CSRF token. */
async function signIn(api: TTestApi, email: string, password = PASSWORD) {
  const agent = request.agent(api.app);
  const res = await agent.post('/dashboard/api/session').send({ email, password });
  return { agent, res, csrf: res.body.csrf_token as string };
}

describe('dashboard session API', () => {
  let api: TTestApi;
  let owner: { accountId: string; apiKey: string; email: string };

  beforeAll(async () => {
    api = await startTestApi();
    const account = await api.account('pro');
    const row = await api.db.account.findUniqueOrThrow({ where: { id: account.accountId } });
    await createOwnerRepository(api.db).setPasswordHash(account.accountId, await hashPassword(PASSWORD));
    owner = { ...account, email: row.ownerEmail };
  });
  afterAll(async () => {
    await api.close();
  });

  it('hashes passwords with scrypt and verifies only the right one', async () => {
    const stored = await hashPassword(PASSWORD);
    expect(stored).toMatch(/^scrypt\$131072\$8\$1\$/);
    expect(stored).not.toContain(PASSWORD);
    expect(await verifyPassword(PASSWORD, stored)).toBe(true);
    expect(await verifyPassword(`${PASSWORD}!`, stored)).toBe(false);
    expect(await verifyPassword(PASSWORD, 'garbage')).toBe(false);
  });

  it('signs in with the owner e-mail and password: an HttpOnly, SameSite=Strict cookie and a CSRF token', async () => {
    const { agent, res, csrf } = await signIn(api, owner.email.toUpperCase());
    expect(res.status).toBe(200);
    expect(res.body.account).toEqual(expect.objectContaining({ id: owner.accountId, plan: 'pro' }));
    expect(csrf).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    const cookie = String(res.headers['set-cookie']);
    expect(cookie).toMatch(/sps_session=[A-Za-z0-9_-]+/);
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect(cookie).toMatch(/Path=\/dashboard/);
    const session = await agent.get('/dashboard/api/session');
    expect(session.status).toBe(200);
    expect(session.body.csrf_token).toBe(csrf);
  });

  it('refuses a wrong password and an unknown e-mail alike (401, same words)', async () => {
    const wrong = await signIn(api, owner.email, 'not the password');
    const unknown = await signIn(api, 'nobody@example.com', PASSWORD);
    for (const { res } of [wrong, unknown]) {
      expect(res.status).toBe(401);
      expect(res.body).toEqual(
        expect.objectContaining({ code: 'unauthorized', error: 'Wrong e-mail or password' }),
      );
      expect(res.headers['set-cookie']).toBeUndefined();
    }
    const noCookie = await request(api.app).get('/dashboard/api/session');
    expect(noCookie.status).toBe(401);
  });

  it('names the field of a malformed sign-in', async () => {
    const res = await request(api.app).post('/dashboard/api/session').send({ email: 'a@b.co' });
    expect(res.status).toBe(400);
    expect(res.body.details.field).toBe('password');
  });

  it('refuses state-changing requests without the CSRF token, and does nothing', async () => {
    const { agent, csrf } = await signIn(api, owner.email);
    const before = await agent.get('/dashboard/api/v1/posts');
    const refused = await agent
      .post('/dashboard/api/v1/posts')
      .send({ content: 'x', platforms: ['twitter'] });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('forbidden');
    const wrong = await agent
      .post('/dashboard/api/v1/posts')
      .set('x-csrf-token', `${csrf.slice(0, -2)}xx`)
      .send({ content: 'x', platforms: ['twitter'] });
    expect(wrong.status).toBe(403);
    const after = await agent.get('/dashboard/api/v1/posts');
    expect(after.body.total).toBe(before.body.total);
    const created = await agent
      .post('/dashboard/api/v1/posts')
      .set('x-csrf-token', csrf)
      .send({ content: 'from the dashboard', platforms: ['twitter'] });
    expect(created.status).toBe(201);
    // The same post through the public API with the account's key: one store, one set of rules.
    const viaKey = await request(api.app).get(`/v1/posts/${created.body.id}`).set(bearer(owner.apiKey));
    expect(viaKey.body.content).toBe('from the dashboard');
    // Validation is the public API's, in Variant B's shape.
    const invalid = await agent
      .post('/dashboard/api/v1/posts')
      .set('x-csrf-token', csrf)
      .send({ platforms: [] });
    expect(invalid.status).toBe(400);
    expect(invalid.body.code).toBe('validation_error');
    // Variant A's routes too (queue settings live there).
    const settings = await agent
      .put('/dashboard/api/a/queue-settings')
      .set('x-csrf-token', csrf)
      .send({ startHour: 25 });
    expect(settings.status).toBe(400);
    expect(settings.body.error).toMatch(/startHour/);
  });

  it('creates a key shown once, lists prefixes only, revokes it, and the API refuses it afterwards', async () => {
    const { agent, csrf } = await signIn(api, owner.email);
    const created = await agent.post('/dashboard/api/keys').set('x-csrf-token', csrf);
    expect(created.status).toBe(201);
    expect(created.body.key).toMatch(/^sps_live_/);
    const works = await request(api.app).get('/v1/posts').set(bearer(created.body.key));
    expect(works.status).toBe(200);
    const list = await agent.get('/dashboard/api/keys');
    const listed = list.body.keys.find((k: { id: string }) => k.id === created.body.id);
    expect(listed).toEqual(expect.objectContaining({ prefix: created.body.prefix, revoked_at: null }));
    expect(JSON.stringify(list.body)).not.toContain(created.body.key);
    const noCsrf = await agent.delete(`/dashboard/api/keys/${created.body.id}`);
    expect(noCsrf.status).toBe(403);
    const revoked = await agent.delete(`/dashboard/api/keys/${created.body.id}`).set('x-csrf-token', csrf);
    expect(revoked.status).toBe(204);
    // The verifier had the key cached; the revocation's broadcast evicts it.
    let status = 200;
    for (let i = 0; i < 50 && status === 200; i += 1) {
      status = (await request(api.app).get('/v1/posts').set(bearer(created.body.key))).status;
      if (status === 200) await new Promise((r) => setTimeout(r, 20));
    }
    expect(status).toBe(401);
  });

  it("never touches another account's keys or posts", async () => {
    const other = await api.account('pro');
    const otherKeys = await api.db.apiKey.findMany({ where: { accountId: other.accountId } });
    const otherPost = await request(api.app)
      .post('/v1/posts')
      .set(bearer(other.apiKey))
      .send({ content: 'theirs', platforms: ['twitter'] });
    const { agent, csrf } = await signIn(api, owner.email);
    const revoke = await agent.delete(`/dashboard/api/keys/${otherKeys[0]!.id}`).set('x-csrf-token', csrf);
    expect(revoke.status).toBe(404);
    const read = await agent.get(`/dashboard/api/v1/posts/${otherPost.body.id}`);
    expect(read.status).toBe(404);
    const stillWorks = await request(api.app).get('/v1/posts').set(bearer(other.apiKey));
    expect(stillWorks.status).toBe(200);
  });

  it('signs out: the session ends everywhere, the old cookie no longer works', async () => {
    const { agent, csrf } = await signIn(api, owner.email);
    const out = await agent.delete('/dashboard/api/session').set('x-csrf-token', csrf);
    expect(out.status).toBe(204);
    expect(String(out.headers['set-cookie'])).toMatch(/sps_session=;/);
    const after = await agent.get('/dashboard/api/session');
    expect(after.status).toBe(401);
  });

  it('limits sign-in attempts per e-mail (429 with Retry-After), even with the right password', async () => {
    const target = await api.account('free');
    const row = await api.db.account.findUniqueOrThrow({ where: { id: target.accountId } });
    await createOwnerRepository(api.db).setPasswordHash(target.accountId, await hashPassword(PASSWORD));
    const statuses: number[] = [];
    for (let i = 0; i < 11; i += 1) {
      statuses.push((await signIn(api, row.ownerEmail, `guess-${i}`)).res.status);
    }
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(statuses[10]).toBe(429);
    const right = await signIn(api, row.ownerEmail);
    expect(right.res.status).toBe(429);
    expect(Number(right.res.headers['retry-after'])).toBeGreaterThan(0);
    // Twelve scrypt checks at N=2^17 (128 MiB each): room for a loaded machine.
  }, 120_000);
});

describe('dashboard sign-in limit per client address', () => {
  let api: TTestApi;
  beforeAll(async () => {
    // One proxy in front: the client address comes from X-Forwarded-For.
    api = await startTestApi({ env: { TRUST_PROXY: '1' } });
  });
  afterAll(() => api.close());

  it('counts IPv6 clients per /64: 30 attempts from fresh addresses of one prefix, then 429', async () => {
    const attempt = (i: number, address: string) =>
      request(api.app)
        .post('/dashboard/api/session')
        .set('x-forwarded-for', address)
        .send({ email: `nobody-${i}@example.com`, password: PASSWORD });
    for (let i = 0; i < 30; i += 1) {
      // A fresh address (and e-mail) each time: without the /64 these would be 30 different clients.
      expect((await attempt(i, `2001:db8:aa:bb:${i.toString(16)}::1`)).status).toBe(401);
    }
    const refused = await attempt(30, '2001:db8:aa:bb:ffff::2');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect((await attempt(31, '2001:db8:aa:bc::1')).status).toBe(401);
    // 31 scrypt checks at N=2^17 (the decoy's): room for a loaded machine.
  }, 180_000);
});
