import { describe, expect, it } from '@jest/globals';
import {
  createClient,
  parseRetryAfter,
  SpsApiErrorA,
  SpsApiErrorB,
  SpsTransportError,
  type TClientOptions,
  type TRetryEvent,
} from '../src/index.js';
import { errorB, json, postB, scriptedServer } from './support/scripted-server.js';

// The client against a real local HTTP server that answers what each test scripts: retries, Retry-After,
// idempotency keys and typed errors, over real sockets (no mocked fetch).

const srv = scriptedServer();

function client(extra: Partial<TClientOptions> = {}) {
  const retries: TRetryEvent[] = [];
  const c = createClient({
    baseUrl: srv.baseUrl,
    apiKey: 'sps_test_key',
    // Short waits without Retry-After; no jitter so the waits can be compared exactly.
    retry: { baseDelayMs: 10, jitterMs: 0 },
    onRetry: (event) => retries.push(event),
    ...extra,
  });
  return { c, retries };
}

describe('retries', () => {
  it('waits Retry-After seconds on a 429 and sends the create again with the same Idempotency-Key', async () => {
    srv.handler = (_req, res, n) =>
      n === 1 ? json(res, 429, errorB('rate_limited'), { 'retry-after': '1' }) : json(res, 201, postB('p1'));
    const { c, retries } = client();
    const post = await c.v1.posts.create({ content: 'x', platforms: ['twitter'] });
    expect(post.id).toBe('p1');
    expect(srv.seen).toHaveLength(2);
    const keys = srv.seen.map((s) => s.headers['idempotency-key']);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
    expect(srv.seen[1]?.body).toBe(JSON.stringify({ content: 'x', platforms: ['twitter'] }));
    expect(retries).toEqual([expect.objectContaining({ status: 429, attempt: 1, delayMs: 1000 })]);
    expect(retries[0]?.idempotencyKey).toBe(keys[0]);
  });

  it('honours an HTTP-date Retry-After on a 503, then gives up after maxAttempts with the typed error', async () => {
    srv.handler = (_req, res) =>
      json(res, 503, errorB('service_unavailable'), {
        'retry-after': new Date(Date.now() + 1500).toUTCString(),
      });
    const { c, retries } = client({ retry: { maxAttempts: 2, jitterMs: 0 } });
    const error = await c.v1.posts.get('p1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SpsApiErrorB);
    const b = error as SpsApiErrorB;
    expect([b.status, b.code, b.attempts, b.operationId]).toEqual([
      503,
      'service_unavailable',
      2,
      'getPostB',
    ]);
    expect(srv.seen).toHaveLength(2);
    // An HTTP date has whole seconds: the wait is what is left of them.
    expect(retries[0]?.delayMs).toBeGreaterThan(0);
    expect(retries[0]?.delayMs).toBeLessThanOrEqual(1500);
  });

  it('backs off exponentially without Retry-After, up to maxAttempts', async () => {
    srv.handler = (_req, res) => json(res, 500, errorB('internal_error'));
    const { c, retries } = client({
      retry: { baseDelayMs: 10, maxDelayMs: 25, jitterMs: 0, maxAttempts: 4 },
    });
    await expect(c.v1.posts.list()).rejects.toBeInstanceOf(SpsApiErrorB);
    expect(srv.seen).toHaveLength(4);
    expect(retries.map((r) => r.delayMs)).toEqual([10, 20, 25]);
  });

  it('adds jitter within jitterMs', async () => {
    srv.handler = (_req, res, n) => (n === 1 ? json(res, 502, errorB('internal_error')) : json(res, 200, []));
    const { c, retries } = client({ retry: { baseDelayMs: 10, jitterMs: 50 } });
    await c.call('listAccountsB');
    expect(retries[0]?.delayMs).toBeGreaterThanOrEqual(10);
    expect(retries[0]?.delayMs).toBeLessThan(60);
  });

  it('does not wait a Retry-After longer than maxRetryAfterMs: the 429 is thrown at once', async () => {
    srv.handler = (_req, res) => json(res, 429, errorB('rate_limited'), { 'retry-after': '3600' });
    const { c, retries } = client();
    const error = (await c.v1.posts.list().catch((e: unknown) => e)) as SpsApiErrorB;
    expect(error.code).toBe('rate_limited');
    expect(error.headers['retry-after']).toBe('3600');
    expect(srv.seen).toHaveLength(1);
    expect(retries).toEqual([]);
  });

  it('never retries a POST without an Idempotency-Key', async () => {
    srv.handler = (_req, res) => json(res, 503, { error: 'down' });
    const { c } = client();
    await expect(c.api.posts.approve('p1')).rejects.toBeInstanceOf(SpsApiErrorA);
    expect(srv.seen).toHaveLength(1);
    expect(srv.seen[0]?.headers['idempotency-key']).toBeUndefined();
    srv.seen = [];
    await expect(c.v1.posts.publish('p1', { idempotencyKey: false })).rejects.toBeInstanceOf(SpsApiErrorB);
    expect(srv.seen).toHaveLength(1);
    expect(srv.seen[0]?.headers['idempotency-key']).toBeUndefined();
  });

  it('sends a caller-given key on every attempt, and a new key for each logical call', async () => {
    srv.handler = (_req, res, n) => (n % 2 === 1 ? json(res, 503, errorB('x')) : json(res, 200, postB('p1')));
    const { c } = client();
    await c.v1.posts.publish('p1', { idempotencyKey: 'order-42-publish' });
    expect(srv.seen.map((s) => s.headers['idempotency-key'])).toEqual([
      'order-42-publish',
      'order-42-publish',
    ]);
    srv.seen = [];
    await c.v1.posts.publish('p1');
    await c.v1.posts.publish('p1');
    const [a, a2, b, b2] = srv.seen.map((s) => s.headers['idempotency-key']);
    expect(a).toBe(a2);
    expect(b).toBe(b2);
    expect(a).not.toBe(b);
  });

  it('waits out a 409 idempotency_key_in_use with the same key', async () => {
    srv.handler = (_req, res, n) =>
      n === 1 ? json(res, 409, errorB('idempotency_key_in_use')) : json(res, 201, postB('p1'));
    const { c } = client();
    await c.v1.posts.create({ content: 'x', platforms: ['twitter'] });
    expect(srv.seen).toHaveLength(2);
    srv.seen = [];
    srv.handler = (_req, res) => json(res, 409, errorB('post_not_publishable'));
    await expect(c.v1.posts.publish('p1')).rejects.toMatchObject({
      status: 409,
      code: 'post_not_publishable',
    });
    expect(srv.seen).toHaveLength(1);
  });

  it('retries an idempotent call after a dropped connection, and reports a transport error when it persists', async () => {
    srv.handler = (_req, res, n) => (n === 1 ? res.socket?.destroy() : json(res, 200, { accounts: [] }));
    const { c, retries } = client();
    expect(await c.v1.accounts.list()).toEqual({ accounts: [] });
    expect(retries).toEqual([expect.objectContaining({ attempt: 1, status: undefined })]);

    srv.handler = (_req, res) => res.socket?.destroy();
    const error = await c.v1.accounts.list().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SpsTransportError);
    expect((error as SpsTransportError).attempts).toBe(4);
  });

  it('times out a silent server per attempt', async () => {
    srv.handler = () => undefined;
    const { c } = client({ timeoutMs: 100, retry: { maxAttempts: 2, baseDelayMs: 1, jitterMs: 0 } });
    const error = (await c.v1.accounts.list().catch((e: unknown) => e)) as SpsTransportError;
    expect(error).toBeInstanceOf(SpsTransportError);
    expect(error.message).toContain('no answer within 100 ms');
    expect(srv.seen).toHaveLength(2);
    srv.server.closeAllConnections();
  });

  it("stops at once when the caller's signal aborts during a wait", async () => {
    const controller = new AbortController();
    // Aborted 50 ms into the 30 s Retry-After wait: counted from the answer, not from the call (on a loaded
    // box the first request took longer than 50 ms to arrive).
    srv.handler = (_req, res) => {
      json(res, 429, errorB('rate_limited'), { 'retry-after': '30' });
      setTimeout(() => controller.abort(new Error('stopped by caller')), 50);
    };
    const { c } = client();
    const call = c.v1.posts.list({ signal: controller.signal });
    await expect(call).rejects.toThrow('stopped by caller');
    expect(srv.seen).toHaveLength(1);
  });

  it('parses Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('2026-11-26T12:00:00Z');
    expect(parseRetryAfter('7', now)).toBe(7000);
    expect(parseRetryAfter('Thu, 26 Nov 2026 12:00:05 GMT', now)).toBe(5000);
    expect(parseRetryAfter('Thu, 26 Nov 2026 11:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('1.5', now)).toBeUndefined();
    expect(parseRetryAfter('-3', now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });
});

describe('requests and errors', () => {
  it('sends the key as a Bearer token, JSON bodies, encoded path parameters and the query', async () => {
    srv.handler = (_req, res) => json(res, 200, { posts: [], total: 0 });
    const { c } = client({ baseUrl: `${srv.baseUrl}/`, headers: { 'user-agent': 'example/1.0' } });
    await c.v1.posts.list({ query: { status: 'draft', limit: 5 } });
    await c.v1.posts.get('a/b?c').catch(() => undefined);
    expect(srv.seen[0]?.url).toBe('/v1/posts?status=draft&limit=5');
    expect(srv.seen[0]?.headers.authorization).toBe('Bearer sps_test_key');
    expect(srv.seen[0]?.headers['user-agent']).toBe('example/1.0');
    expect(srv.seen[1]?.url).toBe('/v1/posts/a%2Fb%3Fc');
  });

  it("throws each variant's error body typed, with the field it names", async () => {
    srv.handler = (req, res) =>
      req.url.startsWith('/api')
        ? json(res, 400, {
            error: 'platforms: at least one',
            fix: 'Add a network',
            details: { field: 'platforms' },
          })
        : json(res, 422, {
            error: 'too long',
            code: 'content_too_long',
            details: { field: 'content', fix: 'Shorten it' },
          });
    const { c } = client();
    const a = (await c.api.posts
      .create({ content: 'x', platforms: [] })
      .catch((e: unknown) => e)) as SpsApiErrorA;
    expect(a).toBeInstanceOf(SpsApiErrorA);
    expect([a.variant, a.status, a.field, a.fix, a.body.error]).toEqual([
      'A',
      400,
      'platforms',
      'Add a network',
      'platforms: at least one',
    ]);
    const b = (await c.v1.posts
      .create({ content: 'x', platforms: ['twitter'] })
      .catch((e: unknown) => e)) as SpsApiErrorB;
    expect([b.variant, b.status, b.code, b.field]).toEqual(['B', 422, 'content_too_long', 'content']);
    // A 4xx other than 408/429 is never retried.
    expect(srv.seen).toHaveLength(2);
  });

  it('wraps a body that is not the error shape (a proxy page) in it', async () => {
    srv.handler = (_req, res) =>
      res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not Found</h1>');
    const { c } = client();
    const b = (await c.v1.posts.get('p1').catch((e: unknown) => e)) as SpsApiErrorB;
    expect(b.body).toEqual({ error: '<h1>Not Found</h1>', code: 'not_found', details: {} });
  });
});
