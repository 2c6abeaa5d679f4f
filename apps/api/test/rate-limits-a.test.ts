import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import type { Response } from 'supertest';
import request from 'supertest';
import { createApi } from '../src/app.js';
import { loadEnv } from '../src/env.js';
import { createLogger } from '../src/logger.js';
import { startTestApi, type TTestApi } from './harness.js';

// Variant A limits per client IP. The harness raises them for other test files (all requests come from
// 127.0.0.1); here they are set back to the production defaults (120/min, 50 publishing/h) or made small
// where the spec leaves the number to configuration (the per-minute limit).

const PRODUCTION = { RATE_LIMIT_A_PER_MINUTE: '120', RATE_LIMIT_A_PUBLISH_PER_HOUR: '50' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The exact 429 of Variant A: `{error, fix}` and Retry-After. */
function expect429(res: Response, error: string, windowSeconds: number) {
  expect(res.status).toBe(429);
  const retryAfter = Number(res.headers['retry-after']);
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(windowSeconds);
  expect(res.body).toEqual({
    error,
    fix: `Wait ${retryAfter} second${retryAfter === 1 ? '' : 's'} (the Retry-After header) before sending more, and spread requests out.`,
  });
  // Variant B's headers are not part of Variant A.
  expect(res.headers['x-ratelimit-limit']).toBeUndefined();
}

it('defaults: 120 requests per minute and 50 publishing requests per hour per IP', () => {
  const env = loadEnv({});
  expect(env.RATE_LIMIT_A_PER_MINUTE).toBe(120);
  expect(env.RATE_LIMIT_A_PUBLISH_PER_HOUR).toBe(50);
  expect(env.RATE_LIMITS).toBe('on');
  expect(env.RATE_LIMIT_WINDOW_SCALE).toBe(1);
});

describe('Variant A per-minute limit per IP (default 120)', () => {
  let api: TTestApi;
  beforeAll(async () => {
    api = await startTestApi({ env: PRODUCTION });
  });
  afterAll(() => api.close());

  it('allows 120 requests a minute, counting unauthenticated ones, and answers the 121st with 429 {error, fix}', async () => {
    const { apiKey } = await api.account('pro');
    for (let i = 1; i <= 120; i += 1) {
      // Every tenth without a key: guessing keys uses up the same allowance.
      const res =
        i % 10 === 0
          ? await request(api.app).get('/api/posts')
          : await request(api.app).get('/api/posts').set('x-api-key', apiKey);
      expect(res.status).toBe(i % 10 === 0 ? 401 : 200);
    }
    const refused = await request(api.app).get('/api/posts').set('x-api-key', apiKey);
    expect429(refused, 'Too many requests from your IP address: the limit is 120 per minute', 60);
    // Another account from the same address is refused too: the limit is per IP, not per key.
    const other = await api.account('pro');
    expect((await request(api.app).get('/api/accounts').set('x-api-key', other.apiKey)).status).toBe(429);
  });
});

describe('Variant A publishing limit per IP (50 per hour)', () => {
  let api: TTestApi;
  beforeAll(async () => {
    api = await startTestApi({ env: PRODUCTION });
  });
  afterAll(() => api.close());

  it('counts publish, retry, and create/update with published: true; the 51st is 429 and changes nothing', async () => {
    const { apiKey, accountId } = await api.account('pro');
    await api.connect(accountId, 'bluesky');
    const send = (method: 'post' | 'put', path: string, body?: object) => {
      const req = request(api.app)[method](path).set('x-api-key', apiKey);
      return body ? req.send(body) : req;
    };
    const draft = await send('post', '/api/posts', { content: 'kept as a draft', platforms: ['bluesky'] });
    expect(draft.status).toBe(201);
    const draftId = draft.body.post.id as string;

    const publishing: [string, () => Promise<Response>, number][] = [
      ['publish', () => send('post', `/api/posts/${randomUUID()}/publish`), 404],
      ['retry', () => send('post', `/api/posts/${randomUUID()}/retry`), 404],
      // twitter is not connected: refused (400) before anything is stored, but it was a publishing request.
      [
        'create published',
        () => send('post', '/api/posts', { content: 'x', platforms: ['twitter'], published: true }),
        400,
      ],
      [
        'update published',
        () =>
          send('put', `/api/posts/${randomUUID()}`, {
            content: 'x',
            platforms: ['bluesky'],
            published: true,
          }),
        404,
      ],
      ['PUBLISH upper case', () => send('post', `/API/POSTS/${randomUUID()}/PUBLISH/`), 404],
    ];
    for (let i = 0; i < 50; i += 1) {
      const [name, call, status] = publishing[i % publishing.length] as (typeof publishing)[number];
      const res = await call();
      expect({ i, name, status: res.status }).toEqual({ i, name, status });
      if (i % 10 === 0) {
        // Not publishing requests: drafts and plain edits do not count.
        expect(
          (
            await send('post', '/api/posts', {
              content: `draft ${i}`,
              platforms: ['bluesky'],
              published: false,
            })
          ).status,
        ).toBe(201);
        expect(
          (
            await send('put', `/api/posts/${draftId}`, {
              content: `still a draft ${i}`,
              platforms: ['bluesky'],
            })
          ).status,
        ).toBe(200);
      }
    }

    const refused = await send('post', `/api/posts/${draftId}/publish`);
    expect429(refused, 'Too many publishing requests from your IP address: the limit is 50 per hour', 3600);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(60);
    const before = await api.db.post.count({ where: { accountId } });
    expect429(
      await send('post', '/api/posts', { content: 'not stored', platforms: ['bluesky'], published: true }),
      'Too many publishing requests from your IP address: the limit is 50 per hour',
      3600,
    );
    expect(await api.db.post.count({ where: { accountId } })).toBe(before);

    // The refused publish left the post as it was and queued nothing.
    const post = await api.db.post.findUniqueOrThrow({ where: { id: draftId } });
    expect(post.status).toBe('draft');
    expect(post.publishAttempt).toBe(0);
    const jobs = await api.queues.publish.getJobs([
      'waiting',
      'delayed',
      'active',
      'completed',
      'failed',
      'prioritized',
    ]);
    expect(jobs.filter((j) => j.data.postId === draftId)).toHaveLength(0);
    // Ordinary requests still go through.
    expect(
      (await send('post', '/api/posts', { content: 'draft after', platforms: ['bluesky'] })).status,
    ).toBe(201);
  });
});

describe('Variant A client address', () => {
  let plain: TTestApi;
  let proxied: TTestApi;
  let listed: TTestApi;
  beforeAll(async () => {
    [plain, proxied, listed] = await Promise.all([
      startTestApi({ env: { ...PRODUCTION, RATE_LIMIT_A_PER_MINUTE: '3' } }),
      // One proxy in front of the API: the client is the last address it appended.
      startTestApi({ env: { ...PRODUCTION, RATE_LIMIT_A_PER_MINUTE: '3', TRUST_PROXY: '1' } }),
      // The proxies by address (the test client connects over loopback).
      startTestApi({ env: { ...PRODUCTION, RATE_LIMIT_A_PER_MINUTE: '3', TRUST_PROXY: 'loopback' } }),
    ]);
  });
  afterAll(() => Promise.all([plain.close(), proxied.close(), listed.close()]));

  const get = (api: TTestApi, forwardedFor: string) =>
    request(api.app).get('/api/posts').set('x-forwarded-for', forwardedFor);
  const LIMITED = 'Too many requests from your IP address: the limit is 3 per minute';

  it('ignores X-Forwarded-For without TRUST_PROXY: a client cannot pick a fresh address per request', async () => {
    for (let i = 1; i <= 3; i += 1) expect((await get(plain, `198.51.100.${i}`)).status).toBe(401);
    expect429(await get(plain, '198.51.100.4'), LIMITED, 60);
  });

  it('takes the client address from X-Forwarded-For with TRUST_PROXY', async () => {
    for (let i = 1; i <= 3; i += 1) expect((await get(proxied, '203.0.113.7')).status).toBe(401);
    expect429(await get(proxied, '203.0.113.7'), LIMITED, 60);
    expect((await get(proxied, '203.0.113.8')).status).toBe(401);
  });

  it.each([
    ['a hop count', () => proxied],
    ['a list of proxy addresses', () => listed],
  ])('with %s, addresses the client writes in front of its own are ignored', async (_name, api) => {
    // TRUST_PROXY=true took the leftmost address, which the client writes itself: a fresh one each time
    // dodged the limit. The proxy appends the real address last.
    for (let i = 1; i <= 3; i += 1) {
      expect((await get(api(), `198.51.100.${i}, 203.0.113.20`)).status).toBe(401);
    }
    expect429(await get(api(), '198.51.100.99, 203.0.113.20'), LIMITED, 60);
  });

  it('counts IPv6 clients per /64: fresh addresses of one prefix share the counter', async () => {
    for (const host of ['2001:db8:1:2::1', '2001:db8:1:2::2', '2001:db8:1:2:ffff:ffff:ffff:3']) {
      expect((await get(proxied, host)).status).toBe(401);
    }
    expect429(await get(proxied, '2001:db8:1:2:abcd::9'), LIMITED, 60);
    // The next /64 is another client; an IPv4-mapped address counts as its IPv4 address.
    expect((await get(proxied, '2001:db8:1:3::1')).status).toBe(401);
    for (let i = 0; i < 3; i += 1) expect((await get(proxied, '::ffff:192.0.2.77')).status).toBe(401);
    expect429(await get(proxied, '192.0.2.77'), LIMITED, 60);
  });

  it('refuses TRUST_PROXY=true, naming the forms that replace it', () => {
    expect(() => loadEnv({ TRUST_PROXY: 'true' })).toThrow(
      /TRUST_PROXY: true would trust every hop.*number of proxies.*addresses or CIDRs/,
    );
    expect(() => loadEnv({ TRUST_PROXY: '10.0.0.0/33' })).toThrow(/TRUST_PROXY: "10.0.0.0\/33" is not/);
    expect(loadEnv({ TRUST_PROXY: '2' }).TRUST_PROXY).toBe(2);
    expect(loadEnv({ TRUST_PROXY: '10.0.0.0/8, fd00::/8,loopback' }).TRUST_PROXY).toEqual([
      '10.0.0.0/8',
      'fd00::/8',
      'loopback',
    ]);
    expect(loadEnv({}).TRUST_PROXY).toBe(0);
  });
});

describe('Variant A window and instances', () => {
  let api: TTestApi;
  beforeAll(async () => {
    // A 3-second "minute" (RATE_LIMIT_WINDOW_SCALE is a test hook; production windows are 60 s and 1 h).
    api = await startTestApi({
      env: {
        ...PRODUCTION,
        RATE_LIMIT_A_PER_MINUTE: '3',
        RATE_LIMIT_WINDOW_SCALE: '0.05',
        TRUST_PROXY: '1',
      },
    });
  });
  afterAll(() => api.close());

  const get = (app: TTestApi['app'], ip: string) => request(app).get('/api/posts').set('x-forwarded-for', ip);

  it('resets when the window ends', async () => {
    const { apiKey } = await api.account('pro');
    const send = () => get(api.app, '192.0.2.1').set('x-api-key', apiKey);
    for (let i = 0; i < 3; i += 1) expect((await send()).status).toBe(200);
    const refused = await send();
    expect429(refused, 'Too many requests from your IP address: the limit is 3 per minute', 3);
    await sleep(Number(refused.headers['retry-after']) * 1000 + 200);
    expect((await send()).status).toBe(200);
  });

  it('two API instances sharing one Redis share one counter', async () => {
    const redis = new Redis(api.env.REDIS_URL, { maxRetriesPerRequest: 1 });
    try {
      const second = createApi({
        env: api.env,
        db: api.db,
        redis,
        queues: api.queues,
        logger: createLogger('silent', 'api-test-2'),
      });
      expect((await get(api.app, '192.0.2.2')).status).toBe(401);
      expect((await get(second.app, '192.0.2.2')).status).toBe(401);
      expect((await get(api.app, '192.0.2.2')).status).toBe(401);
      expect((await get(second.app, '192.0.2.2')).status).toBe(429);
      expect((await get(api.app, '192.0.2.2')).status).toBe(429);
    } finally {
      await redis.quit();
    }
  });
});
