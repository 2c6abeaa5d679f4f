import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';

type TTokenMode = 'redirect' | 'flood' | 'trickle';

/**
 * A Mastodon instance run by a hostile tenant: it registers apps and says who connected like a real one,
 * but its token endpoint redirects to an internal service or answers without end.
 */
async function hostileInstance(internalUrl: string) {
  let mode: TTokenMode = 'redirect';
  const closed: Promise<void>[] = [];
  const server = http.createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    if (req.url === '/api/v1/apps') {
      res.end(JSON.stringify({ client_id: 'evil-client', client_secret: 'evil-secret' }));
      return;
    }
    if (req.url === '/api/v1/accounts/verify_credentials') {
      res.end(JSON.stringify({ id: '1', acct: 'evil' }));
      return;
    }
    if (req.url !== '/oauth/token') {
      res.statusCode = 404;
      res.end('{}');
      return;
    }
    if (mode === 'redirect') {
      // A 302 turns the POST into a GET of the internal address, whose answer would become the token.
      res.statusCode = 302;
      res.setHeader('location', `${internalUrl}/latest/meta-data`);
      res.end();
      return;
    }
    // An answer that never ends: fast (memory) or a byte at a time (time).
    closed.push(new Promise((resolve) => res.on('close', () => resolve())));
    res.write('{"access_token":"');
    const timer = setInterval(() => res.write(mode === 'flood' ? 'a'.repeat(65_536) : 'a'), 5);
    res.on('close', () => clearInterval(timer));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    setMode(next: TTokenMode) {
      mode = next;
    },
    /** Resolves once every endless answer started so far has lost its client. */
    allClosed: () => Promise.all(closed),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('Mastodon code exchange against a hostile instance (the operator configured it, so only bounds apply)', () => {
  let api: TTestApi;
  let instance: Awaited<ReturnType<typeof hostileInstance>>;
  let internal: http.Server;
  const internalHits: string[] = [];

  beforeAll(async () => {
    internal = http.createServer((req, res) => {
      internalHits.push(`${req.method} ${req.url}`);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ access_token: 'from-internal' }));
    });
    internal.listen(0, '127.0.0.1');
    await once(internal, 'listening');
    instance = await hostileInstance(`http://127.0.0.1:${(internal.address() as AddressInfo).port}`);
    api = await startTestApi({ env: { NETWORK_MASTODON_BASE_URL: instance.url, OAUTH_TIMEOUT: '1s' } });
  });
  afterAll(async () => {
    await api.close();
    await instance.close();
    await new Promise((resolve) => internal.close(resolve));
  });

  async function callback(mode: TTokenMode): Promise<URL> {
    instance.setMode(mode);
    const created = await api.account('pro');
    const started = await request(api.app)
      .post('/v1/accounts/connect')
      .set(bearer(created.apiKey))
      .send({ platform: 'mastodon', instance: instance.url, redirect_uri: 'https://app.example/done' });
    expect(started.status).toBe(200);
    const res = await request(api.app).get(
      `/oauth/callback/mastodon?code=c0de&state=${encodeURIComponent(started.body.state)}`,
    );
    expect(res.status).toBe(302);
    return new URL(res.headers.location ?? '');
  }

  it('a redirect from the token endpoint is not followed: nothing reaches the internal service', async () => {
    const back = await callback('redirect');
    expect(back.searchParams.get('error')).toBe('exchange_failed');
    expect(back.searchParams.get('account_id')).toBeNull();
    expect(internalHits).toEqual([]);
  });

  it('an answer without end is cut off at the size bound and its connection dropped', async () => {
    const back = await callback('flood');
    expect(back.searchParams.get('error')).toBe('exchange_failed');
    // Resolves only when the API dropped the connection (the test's own timeout is the failure otherwise).
    await instance.allClosed();
  });

  it('a trickling answer is abandoned at OAUTH_TIMEOUT with its connection, not only its promise', async () => {
    const back = await callback('trickle');
    expect(back.searchParams.get('error')).toBe('temporarily_unavailable');
    await instance.allClosed();
  });
});
