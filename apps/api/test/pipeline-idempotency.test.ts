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

describe('idempotency keys expire: past their lifetime a lost answer is read back, or left to a person', () => {
  let api: TTestApi;
  beforeAll(async () => {
    // The publisher no longer trusts the keys, and the networks have forgotten them.
    api = await startTestApi({
      publisher: true,
      networkTimeoutMs: 800,
      readbackSettleMs: 300,
      keyTrustMs: { mastodon: 0, discord: 0 },
    });
    if (api.sim) Object.assign(api.sim.sim.keyLifetimesMs, { mastodon: 0, discord: 0 });
  });
  afterAll(() => api.close());

  it('Mastodon: the status whose answer was lost is found by reading the account back, not posted again', async () => {
    const created = await api.account('pro');
    await api.connect(created.accountId, 'mastodon');
    const m = uniqueMarker('masto');
    api.sim?.sim.addFault({
      platform: 'mastodon',
      kind: 'hang_after_create',
      remaining: 1,
      pathIncludes: '/api/v1/statuses',
    });
    const content = `Lost answer ${m} https://blog.example.com/a-rather-long-path/that-mastodon-cuts?x=1&y=2\n\nSecond <paragraph>`;
    const done = await publishB(api, created.apiKey, { content, platforms: ['mastodon'] });
    const statuses = simPosts(api, 'mastodon', m);
    expect(statuses).toHaveLength(1);
    expect(done.status).toBe('published');
    expect(done.platform_results?.mastodon).toEqual({
      success: true,
      post_id: statuses[0]?.remoteId,
      post_url: expect.any(String),
      resolved_by: 'readback',
    });
  });

  it('Mastodon without read:statuses: stays unknown with what to check, not resent', async () => {
    const created = await api.account('pro');
    await api.connect(created.accountId, 'mastodon', 'noread-user');
    const m = uniqueMarker('masto-noread');
    api.sim?.sim.addFault({
      platform: 'mastodon',
      kind: 'hang_after_create',
      remaining: 1,
      pathIncludes: '/api/v1/statuses',
    });
    const done = await publishB(api, created.apiKey, { content: `noread ${m}`, platforms: ['mastodon'] });
    expect(simPosts(api, 'mastodon', m)).toHaveLength(1);
    expect(done.status).toBe('failed');
    expect(done.platform_results?.mastodon).toEqual({
      success: false,
      error: expect.stringContaining('Mastodon may or may not have received this post'),
    });
    const error = (done.platform_results?.mastodon as { error?: string } | undefined)?.error ?? '';
    expect(error).toContain('read:statuses');
    expect(error).toContain('idempotency key');
  });

  it('Discord past the nonce’s few minutes, without READ_MESSAGE_HISTORY: unknown with what to check, not resent', async () => {
    const created = await api.account('pro');
    await api.connect(created.accountId, 'discord', 'bot', { externalId: 'nohistory-7' });
    const m = uniqueMarker('discord-late');
    api.sim?.sim.addFault({
      platform: 'discord',
      kind: 'hang_after_create',
      remaining: 1,
      pathIncludes: '/messages',
    });
    const done = await publishB(api, created.apiKey, { content: `late ${m}`, platforms: ['discord'] });
    expect(simPosts(api, 'discord', m)).toHaveLength(1);
    expect(done.status).toBe('failed');
    expect(done.platform_results?.discord).toEqual({
      success: false,
      error: expect.stringContaining('Discord may or may not have received this post'),
    });
  });
});
