import { createHash } from 'node:crypto';
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { hashPassword } from '@sps/core';
import { createOAuthStateRepository, createOwnerRepository } from '@sps/db';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';
import { consent, startConnect } from './oauth-helpers.js';

// Each sign-in is an scrypt check at N=2^17 (128 MiB, hundreds of milliseconds): room for a loaded machine.
jest.setTimeout(120_000);

const PASSWORD = 'correct horse battery';

describe('connect links: where the callback may send the browser', () => {
  let api: TTestApi;
  let key: string;

  beforeAll(async () => {
    api = await startTestApi({
      sim: true,
      env: { CONNECT_REDIRECT_ORIGINS: 'https://app.example,http://localhost:5173' },
    });
    ({ apiKey: key } = await api.account('pro'));
  });
  afterAll(() => api.close());

  it('refuses a redirect_uri outside PUBLIC_URL and CONNECT_REDIRECT_ORIGINS: 400 naming redirect_uri, nothing stored', async () => {
    const before = await api.db.oAuthState.count();
    for (const redirect of [
      'https://evil.example/cb',
      'https://app.example.evil.example/cb',
      'https://app.example:8443/cb',
      'http://app.example/cb',
      'http://localhost:5174/',
    ]) {
      const res = await startConnect(api, key, { platform: 'twitter', redirect_uri: redirect });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'validation_error', details: { field: 'redirect_uri' } });
    }
    expect(await api.db.oAuthState.count()).toBe(before);
    // Variant A has no connect route; the dashboard mounts this same router, MCP is checked below.
    for (const redirect of [
      'https://app.example/done',
      'http://localhost:5173/after',
      `${api.env.publicUrl}/dashboard/?connect=twitter#/accounts`,
    ]) {
      expect((await startConnect(api, key, { platform: 'twitter', redirect_uri: redirect })).status).toBe(
        200,
      );
    }
  });

  it('closes the open redirect through ?error=: a state stored with another origin shows a page instead', async () => {
    // A flow started before the allowlist existed (or before it was narrowed) redirects nowhere.
    const state = 'state-from-before-the-allowlist-0123456789';
    const { accountId } = await api.account('pro');
    await createOAuthStateRepository(api.db).create({
      stateHash: createHash('sha256').update(state).digest('hex'),
      accountId,
      platform: 'twitter',
      verifierEncrypted: null,
      redirectUri: 'https://evil.example/phish',
      instanceUrl: null,
      selection: null,
      sessionHash: null,
      expiresAt: new Date(Date.now() + 60_000),
    });
    const res = await request(api.app).get(`/oauth/callback/twitter?state=${state}&error=access_denied`);
    expect(res.status).toBe(400);
    expect(res.headers.location).toBeUndefined();
    expect(res.text).toContain('did not grant access');
  });

  it('MCP connect_account refuses the same redirect_uri with a tool error naming it', async () => {
    const server: Server = api.app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const c = new Client({ name: 'test-agent', version: '1.0.0' });
    try {
      await c.connect(
        new StreamableHTTPClientTransport(
          new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`),
          { requestInit: { headers: { Authorization: `Bearer ${key}` } } },
        ),
      );
      const refused = (await c.callTool({
        name: 'connect_account',
        arguments: { platform: 'twitter', redirect_uri: 'https://evil.example/cb' },
      })) as { isError?: boolean; structuredContent?: { code: string; details: unknown } };
      expect(refused.isError).toBe(true);
      expect(refused.structuredContent).toMatchObject({
        code: 'validation_error',
        details: { issues: [expect.objectContaining({ field: 'redirect_uri' })] },
      });
    } finally {
      await c.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('connect links started from the dashboard are bound to its session', () => {
  let api: TTestApi;

  /** An owner signed in to the dashboard: the agent keeps both cookies (session, connect). */
  async function signedIn(email: string) {
    const { accountId, apiKey } = await api.account('pro');
    await api.db.account.update({ where: { id: accountId }, data: { ownerEmail: email } });
    await createOwnerRepository(api.db).setPasswordHash(accountId, await hashPassword(PASSWORD));
    const agent = request.agent(api.app);
    const res = await agent.post('/dashboard/api/session').send({ email, password: PASSWORD });
    expect(res.status).toBe(200);
    const cookies = res.headers['set-cookie'] as unknown as string[];
    const connectCookie = cookies.find((c) => c.startsWith('sps_connect='))?.split(';')[0] ?? '';
    expect(connectCookie).toMatch(/^sps_connect=[A-Za-z0-9_-]{40,}$/);
    return { accountId, apiKey, agent, csrf: res.body.csrf_token as string, connectCookie };
  }

  /** Starts a connect in the dashboard and consents on the simulator: the callback URL to finish it. */
  async function dashboardFlow(owner: Awaited<ReturnType<typeof signedIn>>, user: string) {
    const started = await owner.agent
      .post('/dashboard/api/v1/accounts/connect')
      .set('X-CSRF-Token', owner.csrf)
      .send({
        platform: 'twitter',
        redirect_uri: `${api.env.publicUrl}/dashboard/?connect=twitter#/accounts`,
      });
    expect(started.status).toBe(200);
    const back = await consent(started.body.url as string, user);
    return `${back.pathname}${back.search}`;
  }

  async function twitterAccounts(accountId: string): Promise<number> {
    return api.db.socialAccount.count({ where: { accountId, platform: 'twitter' } });
  }

  beforeAll(async () => {
    api = await startTestApi({ sim: true });
  });
  afterAll(() => api.close());

  it('a browser without the session (the link sent to someone else) is refused and nothing is connected', async () => {
    const attacker = await signedIn('attacker@corp.com');
    const callback = await dashboardFlow(attacker, 'victim');
    // The victim's browser: no cookie of the attacker's session.
    const res = await request(api.app).get(callback);
    expect(res.status).toBe(302);
    const location = new URL(res.headers.location ?? '');
    expect(location.searchParams.get('error')).toBe('session_mismatch');
    expect(location.searchParams.get('account_id')).toBeNull();
    expect(await twitterAccounts(attacker.accountId)).toBe(0);
    // The state is used up: the attacker cannot finish it in their own browser afterwards either.
    const replay = await attacker.agent.get(callback);
    expect(replay.status).toBe(400);
    expect(await twitterAccounts(attacker.accountId)).toBe(0);
  });

  it("another dashboard session (another owner's browser) is refused too", async () => {
    const starter = await signedIn('starter@corp.com');
    const other = await signedIn('other@corp.com');
    const callback = await dashboardFlow(starter, 'carol');
    const res = await other.agent.get(callback);
    expect(new URL(res.headers.location ?? '').searchParams.get('error')).toBe('session_mismatch');
    expect(await twitterAccounts(starter.accountId)).toBe(0);
    expect(await twitterAccounts(other.accountId)).toBe(0);
  });

  it('the browser of the session that started it connects the account', async () => {
    const owner = await signedIn('owner@corp.com');
    const callback = await dashboardFlow(owner, 'dave');
    const res = await owner.agent.get(callback);
    expect(res.status).toBe(302);
    const location = new URL(res.headers.location ?? '');
    expect(location.origin).toBe(new URL(api.env.publicUrl).origin);
    expect(location.searchParams.get('account_id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(await twitterAccounts(owner.accountId)).toBe(1);
  });

  it('a session that ended meanwhile (signed out) cannot finish its flow', async () => {
    const owner = await signedIn('leaver@corp.com');
    const callback = await dashboardFlow(owner, 'erin');
    await owner.agent.delete('/dashboard/api/session').set('X-CSRF-Token', owner.csrf).expect(204);
    // Even with the connect cookie kept by a browser that ignored the sign-out's cookie clearing.
    const kept = await request(api.app).get(callback).set('Cookie', owner.connectCookie);
    expect(new URL(kept.headers.location ?? '').searchParams.get('error')).toBe('session_mismatch');
    expect(await twitterAccounts(owner.accountId)).toBe(0);
  });

  it('API-started flows are not bound to a browser (documented risk): any browser finishes them', async () => {
    const { apiKey, accountId } = await api.account('pro');
    const res = await startConnect(api, apiKey, {
      platform: 'twitter',
      redirect_uri: 'https://app.example/cb',
    });
    const back = await consent(res.body.url as string, 'frank');
    const done = await request(api.app).get(`${back.pathname}${back.search}`);
    expect(new URL(done.headers.location ?? '').searchParams.get('account_id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(await twitterAccounts(accountId)).toBe(1);
    await request(api.app).get('/v1/accounts').set(bearer(apiKey)).expect(200);
  });
});

describe('PKCE wherever the network takes it', () => {
  let api: TTestApi;
  let key: string;

  beforeAll(async () => {
    api = await startTestApi({ sim: true });
    ({ apiKey: key } = await api.account('pro'));
  });
  afterAll(() => api.close());

  /** The code exchange at the simulated TikTok token endpoint, as an attacker holding a leaked code would try. */
  async function exchange(code: string, verifier?: string) {
    return fetch(`${api.sim?.url}/tiktok/v2/oauth/token/`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        client_key: 'sps-sim-client',
        client_secret: 'sps-sim-secret',
        code,
        grant_type: 'authorization_code',
        redirect_uri: `${api.env.publicUrl}/oauth/callback/tiktok`,
        ...(verifier ? { code_verifier: verifier } : {}),
      }).toString(),
    });
  }

  it('tiktok: S256 challenge on the authorization page; a leaked code without the verifier is refused', async () => {
    const started = await startConnect(api, key, {
      platform: 'tiktok',
      redirect_uri: 'https://app.example/cb',
    });
    const url = new URL(started.body.url as string);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // No verifier, then a wrong one (each on a code of its own: a code is spent by its first exchange).
    for (const verifier of [undefined, 'a'.repeat(43)]) {
      const flow = await startConnect(api, key, {
        platform: 'tiktok',
        redirect_uri: 'https://app.example/cb',
      });
      const back = await consent(flow.body.url as string, 'tess');
      const refused = await exchange(back.searchParams.get('code') ?? '', verifier);
      expect(refused.status).toBe(400);
      expect(await refused.json()).toMatchObject({
        error: 'invalid_request',
        error_description: 'Code verifier or code challenge is invalid.',
      });
    }
  });

  it('tiktok: the callback exchanges the code with the sealed verifier and connects', async () => {
    const started = await startConnect(api, key, {
      platform: 'tiktok',
      redirect_uri: 'https://app.example/cb',
    });
    const back = await consent(started.body.url as string, 'tom');
    const done = await request(api.app).get(`${back.pathname}${back.search}`);
    expect(new URL(done.headers.location ?? '').searchParams.get('account_id')).toMatch(/^[0-9a-f-]{36}$/);
    const token = api.sim?.sim.requests.filter((r) => r.path === '/tiktok/v2/oauth/token/').at(-1);
    expect(JSON.stringify(token?.body ?? '')).toContain('code_verifier');
  });
});
