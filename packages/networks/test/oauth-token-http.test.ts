import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { codeGrant, refreshGrant } from '../src/oauth/grants.js';
import { OAuthError, type TOAuthCall } from '../src/oauth/oauth-types.js';
import { jsonRequest } from '../src/oauth/token-http.js';

/** Counts TCP connections, whatever is said on them (a TLS hello to a plain socket counts too). */
async function connectionCounter() {
  let connections = 0;
  const server = net.createServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as net.AddressInfo).port,
    connections: () => connections,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function mastodonCall(tokenUrl: string, extra: Partial<TOAuthCall> = {}): TOAuthCall {
  return {
    platform: 'mastodon',
    app: { clientId: 'c', clientSecret: 's', authorizeUrl: `${tokenUrl}/../authorize`, tokenUrl },
    redirectUri: 'https://sps.example/oauth/callback/mastodon',
    apiBaseUrl: undefined,
    timeoutMs: 5_000,
    ...extra,
  };
}

async function failure(work: Promise<unknown>): Promise<OAuthError> {
  const error = await work.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OAuthError);
  return error as OAuthError;
}

describe('token requests to a server an API user chose', () => {
  let counter: Awaited<ReturnType<typeof connectionCounter>>;
  beforeAll(async () => {
    counter = await connectionCounter();
  });
  afterAll(() => counter.close());

  it('the code exchange resolves the host through the address guard: a name for loopback is never contacted', async () => {
    // HTTPS and not an IP literal, so only the guarded lookup can refuse it (as after a DNS rebind).
    const call = mastodonCall(`https://localhost:${counter.port}/oauth/token`, { userChosenHost: true });
    const error = await failure(codeGrant(call, 'basic', 'code', 'verifier'));
    expect(error.kind).toBe('invalid');
    expect(error.code).toBe('forbidden_address');
    expect(counter.connections()).toBe(0);
  });

  it('plain http or a private IP literal is refused before any connection', async () => {
    for (const url of [`http://127.0.0.1:${counter.port}/oauth/token`, 'https://10.1.2.3/oauth/token']) {
      const error = await failure(codeGrant(mastodonCall(url, { userChosenHost: true }), 'basic', 'c', null));
      expect(error.code).toBe('forbidden_address');
    }
    expect(counter.connections()).toBe(0);
  });

  it("the operator's own configured host (loopback here) is still called", async () => {
    await failure(
      codeGrant(mastodonCall(`http://127.0.0.1:${counter.port}/oauth/token`), 'basic', 'c', null),
    );
    expect(counter.connections()).toBe(1);
  });
});

describe('jsonRequest bounds', () => {
  let server: http.Server;
  let base = '';
  const closed: Promise<void>[] = [];
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      closed.push(new Promise((resolve) => res.on('close', () => resolve())));
      if (req.url === '/big-declared') {
        res.setHeader('content-length', String(10 * 1024 * 1024));
        res.write('{"access_token":"');
        return;
      }
      if (req.url === '/token') {
        const auth = Buffer.from((req.headers.authorization ?? '').slice(6), 'base64').toString();
        let body = '';
        req.on('data', (c) => {
          body += c;
        });
        req.on('end', () => res.end(JSON.stringify({ access_token: 'a', refresh_token: 'r2', auth, body })));
        return;
      }
      // /slow: a byte at a time, never finished.
      res.write('{"access_token":"');
      const timer = setInterval(() => res.write('a'), 10);
      res.on('close', () => clearInterval(timer));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('an announced Content-Length over the bound ends the request before the body', async () => {
    const error = await failure(
      jsonRequest({ method: 'GET', url: `${base}/big-declared`, timeoutMs: 5_000 }),
    );
    expect(error.code).toBe('too_large');
    await closed.at(-1);
  });

  it('an abort signal ends the request and drops its connection at once', async () => {
    const controller = new AbortController();
    const pending = jsonRequest({
      method: 'GET',
      url: `${base}/slow`,
      timeoutMs: 60_000,
      signal: controller.signal,
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    controller.abort();
    const error = await failure(pending);
    expect(error.kind).toBe('transient');
    await closed.at(-1);
  });

  it('the basic style sends RFC 6749 Basic client authentication and the grant in the form', async () => {
    const call = mastodonCall(`${base}/token`, {
      platform: 'twitter',
      app: { clientId: 'id:1', clientSecret: 's/2', authorizeUrl: '', tokenUrl: `${base}/token` },
    });
    const { body } = await codeGrant(call, 'basic', 'the-code', 'v');
    expect(body.auth).toBe('id%3A1:s%2F2');
    expect(Object.fromEntries(new URLSearchParams(String(body.body)))).toEqual({
      grant_type: 'authorization_code',
      code: 'the-code',
      redirect_uri: 'https://sps.example/oauth/callback/mastodon',
      code_verifier: 'v',
    });
    const tokens = await refreshGrant(call, 'basic', { token: 'old', refreshToken: 'r1' });
    expect(tokens).toMatchObject({ accessToken: 'a', refreshToken: 'r2' });
  });
});
