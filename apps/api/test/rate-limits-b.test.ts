import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import type { Response } from 'supertest';
import request from 'supertest';
import { createApi } from '../src/app.js';
import { createLogger } from '../src/logger.js';
import { bearer, connected, startTestApi, type TTestApi } from './harness.js';

// Variant B limits per API key by tier, with the published numbers (no overrides): 60/300/1000 requests
// per minute, 10/60/300 publishes per hour.

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const nowSeconds = () => Math.floor(Date.now() / 1000);

function expectHeaders(res: Response, limit: number, remaining: number, windowSeconds: number) {
  expect(res.headers['x-ratelimit-limit']).toBe(String(limit));
  expect(res.headers['x-ratelimit-remaining']).toBe(String(remaining));
  const reset = Number(res.headers['x-ratelimit-reset']);
  expect(Number.isInteger(reset)).toBe(true);
  expect(reset).toBeGreaterThanOrEqual(nowSeconds());
  expect(reset).toBeLessThanOrEqual(nowSeconds() + windowSeconds + 1);
}

/** The exact 429 of Variant B. */
function expect429(res: Response, limit: number, message: string, windowSeconds: number) {
  expect(res.status).toBe(429);
  expectHeaders(res, limit, 0, windowSeconds);
  const retryAfter = Number(res.headers['retry-after']);
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(windowSeconds);
  expect(res.body).toEqual({
    error: message,
    code: 'rate_limited',
    details: {
      limit,
      remaining: 0,
      reset_at: new Date(Number(res.headers['x-ratelimit-reset']) * 1000).toISOString(),
      retry_after: retryAfter,
    },
  });
  expect(Object.keys(res.body.details).sort()).toEqual(['limit', 'remaining', 'reset_at', 'retry_after']);
}

/**
 * Sends `limit` requests, 20 at a time (the count in Redis is atomic, so order does not matter): all pass,
 * each with the limit, a valid reset and a distinct remaining count from limit-1 down to 0.
 */
async function expectBurst(
  limit: number,
  call: () => Promise<Response>,
  status: number,
  windowSeconds: number,
) {
  const remaining: number[] = [];
  for (let sent = 0; sent < limit; sent += 20) {
    const batch = await Promise.all(Array.from({ length: Math.min(20, limit - sent) }, call));
    for (const res of batch) {
      expect(res.status).toBe(status);
      expectHeaders(res, limit, Number(res.headers['x-ratelimit-remaining']), windowSeconds);
      remaining.push(Number(res.headers['x-ratelimit-remaining']));
    }
  }
  expect(remaining.sort((a, b) => b - a)).toEqual(Array.from({ length: limit }, (_, i) => limit - 1 - i));
}

describe('Variant B rate limits', () => {
  let api: TTestApi;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(() => api.close());

  const list = (key: string, app = api.app) => request(app).get('/v1/posts').set(bearer(key));
  const publish = (key: string, id: string) =>
    request(api.app).post(`/v1/posts/${id}/publish`).set(bearer(key));

  it('free: 60 requests a minute with headers counting down, the 61st is 429 with the exact body', async () => {
    const { apiKey } = await api.account('free');
    for (let i = 1; i <= 60; i += 1) {
      const res = await list(apiKey);
      expect(res.status).toBe(200);
      expectHeaders(res, 60, 60 - i, 60);
    }
    const refused = await list(apiKey);
    expect429(refused, 60, 'Rate limit exceeded: 60 requests per minute for this API key', 60);
  });

  it('starter allows 300 a minute and pro 1000; plan none is limited like free', async () => {
    for (const [plan, limit] of [
      ['starter', 300],
      ['pro', 1000],
      ['none', 60],
    ] as const) {
      const { apiKey } = await api.account(plan);
      await expectBurst(limit, () => list(apiKey), 200, 60);
      expect429(
        await list(apiKey),
        limit,
        `Rate limit exceeded: ${limit} requests per minute for this API key`,
        60,
      );
    }
  }, 120_000);

  it('every listed endpoint and GET /v1/posts/{id} count against the per-minute limit, with headers on 4xx too', async () => {
    const { apiKey, accountId } = await api.account('free');
    await api.connect(accountId, 'bluesky');
    const created = await request(api.app)
      .post('/v1/posts')
      .set(bearer(apiKey))
      .send({ content: 'hi', platforms: ['bluesky'] });
    expect(created.status).toBe(201);
    expectHeaders(created, 60, 59, 60);
    const id = created.body.id as string;
    const calls: [string, () => Promise<Response>, number][] = [
      ['GET /v1/posts', () => request(api.app).get('/v1/posts').set(bearer(apiKey)), 200],
      ['GET /v1/posts/{id}', () => request(api.app).get(`/v1/posts/${id}`).set(bearer(apiKey)), 200],
      [
        'PUT /v1/posts/{id}',
        () => request(api.app).put(`/v1/posts/${id}`).set(bearer(apiKey)).send({ content: 'edited' }),
        200,
      ],
      ['GET /v1/accounts', () => request(api.app).get('/v1/accounts').set(bearer(apiKey)), 200],
      ['GET /v1/presets', () => request(api.app).get('/v1/presets').set(bearer(apiKey)), 200],
      [
        'POST /v1/presets',
        () =>
          request(api.app)
            .post('/v1/presets')
            .set(bearer(apiKey))
            .send({ name: 'p', platforms: ['bluesky'] }),
        201,
      ],
      // Webhook routes may or may not be mounted yet: every authenticated /v1 request counts either way.
      ['GET /v1/webhooks', () => request(api.app).get('/v1/webhooks').set(bearer(apiKey)), -1],
      [
        'POST /v1/posts 400',
        () => request(api.app).post('/v1/posts').set(bearer(apiKey)).send({ content: '' }),
        400,
      ],
      [
        'GET /v1/posts/{unknown} 404',
        () => request(api.app).get(`/v1/posts/${randomUUID()}`).set(bearer(apiKey)),
        404,
      ],
      ['DELETE /v1/posts/{id}', () => request(api.app).delete(`/v1/posts/${id}`).set(bearer(apiKey)), 204],
    ];
    let remaining = 59;
    for (const [name, call, status] of calls) {
      const res = await call();
      if (status !== -1) expect({ name, status: res.status }).toEqual({ name, status });
      remaining -= 1;
      expect({ name, remaining: res.headers['x-ratelimit-remaining'] }).toEqual({
        name,
        remaining: String(remaining),
      });
      expectHeaders(res, 60, remaining, 60);
    }
  });

  it('free: 10 publishes an hour; publish does not use the per-minute limit; a refused publish changes nothing', async () => {
    const { apiKey, accountId } = await api.account('free');
    await api.connect(accountId, 'bluesky');
    const ids: string[] = [];
    for (let i = 0; i < 11; i += 1) {
      const res = await request(api.app)
        .post('/v1/posts')
        .set(bearer(apiKey))
        .send({ content: `post ${i}`, platforms: ['bluesky'] });
      expect(res.status).toBe(201);
      ids.push(res.body.id);
    }
    for (let i = 0; i < 10; i += 1) {
      const res = await publish(apiKey, ids[i] as string);
      expect(res.status).toBe(200);
      expectHeaders(res, 10, 9 - i, 3600);
    }
    const last = ids[10] as string;
    const refused = await publish(apiKey, last);
    expect429(refused, 10, 'Publish limit exceeded: 10 publishes per hour for this API key', 3600);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(60);

    const after = await request(api.app).get(`/v1/posts/${last}`).set(bearer(apiKey));
    expect(after.body.status).toBe('draft');
    // 11 creates + this GET: the 11 publishes did not touch the per-minute count.
    expectHeaders(after, 60, 60 - 12, 60);
    const jobs = await api.queues.publish.getJobs([
      'waiting',
      'delayed',
      'active',
      'completed',
      'failed',
      'prioritized',
    ]);
    expect(jobs.filter((j) => j.data.postId === last)).toHaveLength(0);
    expect(jobs.filter((j) => ids.includes(j.data.postId))).toHaveLength(10);
  });

  it('starter: 60 publishes an hour, pro: 300 (publish requests count even when they answer 404)', async () => {
    for (const [plan, limit] of [
      ['starter', 60],
      ['pro', 300],
    ] as const) {
      const { apiKey } = await api.account(plan);
      await expectBurst(limit, () => publish(apiKey, randomUUID()), 404, 3600);
      expect429(
        await publish(apiKey, randomUUID()),
        limit,
        `Publish limit exceeded: ${limit} publishes per hour for this API key`,
        3600,
      );
      // The per-minute window is separate and untouched.
      expectHeaders(
        await list(apiKey),
        plan === 'starter' ? 300 : 1000,
        (plan === 'starter' ? 300 : 1000) - 1,
        60,
      );
    }
  }, 60_000);

  it('counts per key: two keys of one account have their own windows', async () => {
    const first = await api.account('free');
    for (let i = 0; i < 60; i += 1) expect((await list(first.apiKey)).status).toBe(200);
    expect((await list(first.apiKey)).status).toBe(429);
    const second = await api.account('free');
    expectHeaders(await list(second.apiKey), 60, 59, 60);
  });

  it('unauthenticated requests are 401 without rate limit headers (there is no key to count against)', async () => {
    const res = await request(api.app).get('/v1/posts');
    expect(res.status).toBe(401);
    expect(res.headers['x-ratelimit-limit']).toBeUndefined();
  });

  it('two API instances sharing one Redis share one counter', async () => {
    const redis = await connected(api.redisFactory.producer());
    try {
      const second = createApi({
        env: api.env,
        db: api.db,
        redis,
        queues: api.queues,
        logger: createLogger('silent', 'api-test-2'),
      });
      const { apiKey } = await api.account('free');
      for (let i = 1; i <= 60; i += 1) {
        const res = await list(apiKey, i % 2 === 0 ? second.app : api.app);
        expect(res.status).toBe(200);
        expect(res.headers['x-ratelimit-remaining']).toBe(String(60 - i));
      }
      expect((await list(apiKey, second.app)).status).toBe(429);
      expect((await list(apiKey, api.app)).status).toBe(429);
    } finally {
      await redis.quit();
    }
  });

  it('keeps limiting in this process when Redis is unreachable (fail-open to per-process counters)', async () => {
    // A client that never connects: the limiter must not wait for it.
    const down = new Redis({
      host: '127.0.0.1',
      port: 1,
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
    });
    down.on('error', () => undefined);
    const app = createApi({
      env: api.env,
      db: api.db,
      redis: down,
      queues: api.queues,
      logger: createLogger('silent', 'api-test-3'),
    }).app;
    const { apiKey } = await api.account('free');
    for (let i = 1; i <= 60; i += 1) {
      const res = await list(apiKey, app);
      expect(res.status).toBe(200);
      expect(res.headers['x-ratelimit-remaining']).toBe(String(60 - i));
    }
    expect((await list(apiKey, app)).status).toBe(429);
    down.disconnect();
  });
});

describe('Variant B rate limit window', () => {
  let api: TTestApi;
  beforeAll(async () => {
    // A 3-second "minute" (RATE_LIMIT_WINDOW_SCALE is a test hook; production windows are 60 s and 1 h).
    api = await startTestApi({ env: { RATE_LIMIT_WINDOW_SCALE: '0.05' } });
  });
  afterAll(() => api.close());

  it('resets when the window ends', async () => {
    const { apiKey } = await api.account('free');
    let refused: Response | undefined;
    // 20 at a time, so that 61 fit in one 3 s window even on a loaded machine (or with a Redis Cluster and
    // PgBouncer in the way); should the window roll over mid-way, the loop just runs on until a 429.
    for (let round = 0; round < 20 && !refused; round += 1) {
      const batch = await Promise.all(
        Array.from({ length: 20 }, () => request(api.app).get('/v1/posts').set(bearer(apiKey))),
      );
      refused = batch.find((res) => res.status === 429);
    }
    if (!refused) throw new Error('never limited');
    expect429(refused, 60, 'Rate limit exceeded: 60 requests per minute for this API key', 3);
    await sleep(Number(refused.headers['retry-after']) * 1000 + 200);
    const again = await request(api.app).get('/v1/posts').set(bearer(apiKey));
    expect(again.status).toBe(200);
    expectHeaders(again, 60, 59, 3);
  });
});
