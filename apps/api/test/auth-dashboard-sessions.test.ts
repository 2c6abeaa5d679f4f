import { execFile } from 'node:child_process';
import { randomBytes, scrypt } from 'node:crypto';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { hashPassword, verifyPassword } from '@sps/core';
import { createOwnerRepository } from '@sps/db';
import request from 'supertest';
import { loadEnv } from '../src/env.js';
import { startTestApi, type TTestApi } from './harness.js';

// Each sign-in is an scrypt check at N=2^17 (128 MiB, hundreds of milliseconds): room for a loaded machine.
jest.setTimeout(120_000);

const run = promisify(execFile);
const ADMIN_CLI = resolve(import.meta.dirname, '../../admin/dist/main.js');
const PASSWORD = 'correct horse battery';

async function signIn(api: TTestApi, email: string, password = PASSWORD) {
  const agent = request.agent(api.app);
  const res = await agent.post('/dashboard/api/session').send({ email, password });
  return { agent, res, csrf: res.body.csrf_token as string };
}

/** An account owned by `email` with the dashboard password set. */
async function owner(api: TTestApi, email: string, password = PASSWORD): Promise<string> {
  const { accountId } = await api.account('pro');
  await api.db.account.update({ where: { id: accountId }, data: { ownerEmail: email } });
  await createOwnerRepository(api.db).setPasswordHash(accountId, await hashPassword(password));
  return accountId;
}

/** The hash format of before: scrypt N=2^15 (what `hashPassword` made until the cost was raised). */
async function legacyHash(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await new Promise<Buffer>((done, fail) =>
    scrypt(password.normalize('NFKC'), salt, 32, { N: 2 ** 15, r: 8, p: 1, maxmem: 64 << 20 }, (e, k) =>
      e ? fail(e) : done(k),
    ),
  );
  return ['scrypt', 2 ** 15, 8, 1, salt.toString('base64url'), key.toString('base64url')].join('$');
}

describe('dashboard sign-in: the e-mail is an address, never a pattern', () => {
  let api: TTestApi;
  let first: string;

  beforeAll(async () => {
    api = await startTestApi();
    // The oldest accounts with a password: a pattern that matched them would try the password against them.
    first = await owner(api, 'ann.lee@corp.com');
    await owner(api, 'bob@corp.com');
  });
  afterAll(() => api.close());

  it('`%` and `%@corp.com` sign nobody in: 400 naming email, no cookie', async () => {
    for (const email of ['%', '%@corp.com', '_%', 'ann.lee@corp.com%']) {
      const { res } = await signIn(api, email);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'validation_error', details: { field: 'email' } });
      expect(res.headers['set-cookie']).toBeUndefined();
    }
  });

  it('a well-formed address with LIKE wildcards (`_`) matches only itself', async () => {
    // `ann_lee@corp.com` ILIKE-matched `ann.lee@corp.com`: `_` stands for any one character there.
    const wildcard = await signIn(api, 'ann_lee@corp.com');
    expect(wildcard.res.status).toBe(401);
    expect(wildcard.res.headers['set-cookie']).toBeUndefined();
    const exact = await signIn(api, 'ANN.LEE@corp.com');
    expect(exact.res.status).toBe(200);
    expect(exact.res.body.account.id).toBe(first);
  });

  it('hashes with scrypt N=2^17; a hash of the old N=2^15 signs in and is replaced by a new one', async () => {
    expect(await hashPassword(PASSWORD)).toMatch(/^scrypt\$131072\$8\$1\$/);
    const accountId = await owner(api, 'legacy@corp.com');
    const old = await legacyHash(PASSWORD);
    await api.db.account.update({ where: { id: accountId }, data: { passwordHash: old } });
    const { res, agent } = await signIn(api, 'legacy@corp.com');
    expect(res.status).toBe(200);
    const stored = (await api.db.account.findUniqueOrThrow({ where: { id: accountId } })).passwordHash!;
    expect(stored).toMatch(/^scrypt\$131072\$8\$1\$/);
    expect(await verifyPassword(PASSWORD, stored)).toBe(true);
    // The upgrade is the same password: the session it was made in lives on.
    expect((await agent.get('/dashboard/api/session')).status).toBe(200);
    expect((await signIn(api, 'legacy@corp.com')).res.status).toBe(200);
  });
});

describe('dashboard sessions end with the password, and on "sign out everywhere"', () => {
  let api: TTestApi;

  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(() => api.close());

  it('`admin account set-password` ends every session of the account (and of no other account)', async () => {
    const accountId = await owner(api, 'pw-change@corp.com');
    await owner(api, 'bystander@corp.com');
    const one = await signIn(api, 'pw-change@corp.com');
    const two = await signIn(api, 'pw-change@corp.com');
    const other = await signIn(api, 'bystander@corp.com');
    for (const s of [one, two, other]) expect((await s.agent.get('/dashboard/api/session')).status).toBe(200);

    const { stdout } = await run(
      process.execPath,
      [ADMIN_CLI, 'account', 'set-password', '--account', accountId, '--password', 'a brand new password'],
      { env: { ...process.env, DATABASE_URL: api.env.DATABASE_URL, REDIS_URL: api.env.REDIS_URL } },
    );
    expect(JSON.parse(stdout)).toEqual({ accountId });

    for (const s of [one, two]) {
      expect((await s.agent.get('/dashboard/api/session')).status).toBe(401);
      const write = await s.agent.post('/dashboard/api/keys').set('X-CSRF-Token', s.csrf).send({});
      expect(write.status).toBe(401);
    }
    expect((await other.agent.get('/dashboard/api/session')).status).toBe(200);
    // The new password signs in; the old one does not.
    expect((await signIn(api, 'pw-change@corp.com')).res.status).toBe(401);
    expect((await signIn(api, 'pw-change@corp.com', 'a brand new password')).res.status).toBe(200);
  });

  it('DELETE /dashboard/api/sessions ends this and every other session of the account (CSRF required)', async () => {
    await owner(api, 'everywhere@corp.com');
    const here = await signIn(api, 'everywhere@corp.com');
    const elsewhere = await signIn(api, 'everywhere@corp.com');
    const noCsrf = await here.agent.delete('/dashboard/api/sessions');
    expect(noCsrf.status).toBe(403);
    expect((await elsewhere.agent.get('/dashboard/api/session')).status).toBe(200);

    const done = await here.agent.delete('/dashboard/api/sessions').set('X-CSRF-Token', here.csrf);
    expect(done.status).toBe(204);
    expect(String(done.headers['set-cookie'])).toMatch(/sps_session=;/);
    expect((await here.agent.get('/dashboard/api/session')).status).toBe(401);
    expect((await elsewhere.agent.get('/dashboard/api/session')).status).toBe(401);
    // Signing in again works, with a session of the new generation.
    const again = await signIn(api, 'everywhere@corp.com');
    expect(again.res.status).toBe(200);
    expect((await again.agent.get('/dashboard/api/session')).status).toBe(200);
  });
});

describe('the session cookie behind a TLS proxy', () => {
  it('is Secure when PUBLIC_URL is https, though the request reached the API over plain http', async () => {
    const api = await startTestApi({
      env: { PUBLIC_URL: 'https://sps.example', TRUST_PROXY: '1', ENCRYPTION_KEY: '33'.repeat(32) },
    });
    try {
      await owner(api, 'tls@corp.com');
      const { res } = await signIn(api, 'tls@corp.com');
      expect(res.status).toBe(200);
      const cookies = res.headers['set-cookie'] as unknown as string[];
      const session = cookies.find((c) => c.startsWith('sps_session='));
      const connect = cookies.find((c) => c.startsWith('sps_connect='));
      expect(session).toMatch(/; Secure/);
      expect(connect).toMatch(/; Secure/);
      expect(connect).toMatch(/SameSite=Lax/);
      expect(connect).toMatch(/Path=\/oauth\/callback/);
    } finally {
      await api.close();
    }
  });

  it('is not Secure with an http PUBLIC_URL (a loopback development server)', async () => {
    const api = await startTestApi();
    try {
      await owner(api, 'plain@corp.com');
      const { res } = await signIn(api, 'plain@corp.com');
      expect(String(res.headers['set-cookie'])).not.toMatch(/Secure/);
    } finally {
      await api.close();
    }
  });

  it('the API refuses to start with an https PUBLIC_URL and no TRUST_PROXY', () => {
    const base = { ENCRYPTION_KEY: '22'.repeat(32), PUBLIC_URL: 'https://sps.example' };
    expect(() => loadEnv(base)).toThrow(/TRUST_PROXY/);
    expect(loadEnv({ ...base, TRUST_PROXY: '1' }).secureCookies).toBe(true);
  });
});
