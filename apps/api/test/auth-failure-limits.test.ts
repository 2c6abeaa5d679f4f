import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { API_KEY_PREFIX } from '@sps/core';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';

const LIMIT = 3;
const madeUpKey = () => `${API_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;

describe('failed-authentication limit per address: Variant B headers and OAuth callbacks', () => {
  let api: TTestApi;
  // Each test is its own client address (TRUST_PROXY: one proxy, the test writes X-Forwarded-For).
  let address = '';
  let n = 0;
  beforeAll(async () => {
    api = await startTestApi({
      sim: true,
      env: { AUTH_FAILURES_PER_MINUTE: String(LIMIT), TRUST_PROXY: '1' },
    });
  });
  afterAll(() => api.close());
  beforeEach(() => {
    n += 1;
    address = `198.51.100.${n}`;
  });

  it("Variant B's 429 for wrong keys carries X-RateLimit-Limit/Remaining/Reset and Retry-After", async () => {
    for (let i = 0; i < LIMIT; i++) {
      const res = await request(api.app)
        .get('/v1/posts')
        .set(bearer(madeUpKey()))
        .set('X-Forwarded-For', address);
      expect(res.status).toBe(401);
    }
    const before = Math.floor(Date.now() / 1000);
    const res = await request(api.app)
      .get('/v1/posts')
      .set(bearer(madeUpKey()))
      .set('X-Forwarded-For', address);
    expect(res.status).toBe(429);
    expect(res.body).toMatchObject({ code: 'rate_limited', details: { limit: LIMIT, remaining: 0 } });
    expect(res.headers['x-ratelimit-limit']).toBe(String(LIMIT));
    expect(res.headers['x-ratelimit-remaining']).toBe('0');
    const reset = Number(res.headers['x-ratelimit-reset']);
    const retryAfter = Number(res.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // The reset is the window's end as unix seconds, the same moment the body's reset_at names.
    expect(reset).toBeGreaterThanOrEqual(before + 1);
    expect(reset).toBe(Math.ceil(Date.parse(res.body.details.reset_at) / 1000));
  });

  it('unknown OAuth states count as failures: past the limit the callback answers 429 and uses up nothing', async () => {
    const { apiKey } = await api.account('pro');
    const started = await request(api.app)
      .post('/v1/accounts/connect')
      .set(bearer(apiKey))
      .send({ platform: 'twitter', redirect_uri: 'https://app.example/done' });
    expect(started.status).toBe(200);
    const callback = (state: string) =>
      request(api.app).get(`/oauth/callback/twitter?code=c&state=${state}`).set('X-Forwarded-For', address);
    for (let i = 0; i < LIMIT; i++) {
      const res = await callback(randomBytes(16).toString('hex'));
      expect(res.status).toBe(400);
    }
    const blocked = await callback(randomBytes(16).toString('hex'));
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(blocked.headers['cache-control']).toBe('no-store');
    expect(blocked.text).toContain('Too many connection links');
    // A real state from the blocked address is refused without being taken ...
    expect((await callback(started.body.state)).status).toBe(429);
    // ... so the person finishes from elsewhere: the state is still there (the made-up code then fails).
    const elsewhere = await callback(started.body.state).set('X-Forwarded-For', '203.0.113.99');
    expect(elsewhere.status).toBe(302);
    expect(new URL(elsewhere.headers.location ?? '').searchParams.get('error')).toBe('exchange_failed');
  });

  it('wrong API keys and unknown states share one budget per address', async () => {
    for (let i = 0; i < LIMIT; i++) {
      await request(api.app).get('/v1/posts').set(bearer(madeUpKey())).set('X-Forwarded-For', address);
    }
    const res = await request(api.app).get('/oauth/callback/twitter?state=s').set('X-Forwarded-For', address);
    expect(res.status).toBe(429);
  });
});
