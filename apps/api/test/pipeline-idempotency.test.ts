import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';
import { createB, settleB, simPosts, simRequests, type TPostB, uniqueMarker } from './pipeline-helpers.js';

// What networks that deduplicate say about a resend: X refuses duplicate text (a cue that an earlier send
// landed), Mastodon's Idempotency-Key and Discord's nonce only last a while.

async function publishB(api: TTestApi, key: string, body: object, timeoutMs = 30_000): Promise<TPostB> {
  const post = await createB(api, key, body);
  expect((await request(api.app).post(`/v1/posts/${post.id}/publish`).set(bearer(key))).status).toBe(200);
  return settleB(api, key, post.id, timeoutMs);
}

describe('X refuses duplicate content', () => {
  let api: TTestApi;
  beforeAll(async () => {
    api = await startTestApi({ publisher: true, networkTimeoutMs: 2_000, readbackSettleMs: 300 });
  });
  afterAll(() => api.close());

  it('a first send of a text the account just posted is rejected, saying why', async () => {
    const created = await api.account('pro');
    await api.connect(created.accountId, 'twitter', 'dup-first');
    const m = uniqueMarker('dup');
    expect(
      (await publishB(api, created.apiKey, { content: `twice ${m}`, platforms: ['twitter'] })).status,
    ).toBe('published');
    const second = await publishB(api, created.apiKey, { content: `twice ${m}`, platforms: ['twitter'] });
    expect(second.status).toBe('failed');
    expect(second.platform_results?.twitter).toEqual({
      success: false,
      error: expect.stringContaining('refused this post as a duplicate'),
    });
    expect(simPosts(api, 'twitter', m)).toHaveLength(1);
  });

  it('a resend refused as a duplicate reads the account back and records the earlier send’s tweet', async () => {
    const created = await api.account('pro');
    await api.connect(created.accountId, 'twitter', 'dup-resend');
    const m = uniqueMarker('dup-resend');
    // The first send is stored 3 s after it arrives (the call times out at 2 s, the read finds nothing and
    // the settle wait has passed); the resend is answered after 1.5 s, by which time X holds the first.
    api.sim?.sim.addFault({
      platform: 'twitter',
      kind: 'slow',
      delayMs: 3_000,
      remaining: 1,
      pathIncludes: '/2/tweets',
    });
    api.sim?.sim.addFault({
      platform: 'twitter',
      kind: 'slow',
      delayMs: 1_500,
      remaining: 1,
      pathIncludes: '/2/tweets',
    });
    const done = await publishB(api, created.apiKey, { content: `resend ${m}`, platforms: ['twitter'] });
    const tweets = simPosts(api, 'twitter', m);
    expect(tweets).toHaveLength(1);
    expect(simRequests(api, 'twitter', '/2/tweets', m)).toHaveLength(2);
    expect(done.status).toBe('published');
    expect(done.platform_results?.twitter).toEqual({
      success: true,
      post_id: tweets[0]?.remoteId,
      post_url: expect.any(String),
      resolved_by: 'readback',
    });
  }, 60_000);
});
