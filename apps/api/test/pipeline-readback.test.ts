import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { TPlatform } from '@sps/core';
import { LINKEDIN_SIM_MEMBER_READ_TOKEN } from '@sps/network-sim';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';
import {
  createB,
  getA,
  settleB,
  simPosts,
  simRequests,
  type TPostB,
  type TPublishResultA,
  uniqueMarker,
} from './pipeline-helpers.js';

// A network receives the post and its answer is lost (the call times out): the publisher reads the account
// back, finds the post, and records its id as if the answer had arrived. Exactly one copy, one create call.

interface TReadable {
  platform: TPlatform;
  /** The call that creates the post (the answer to it is lost). */
  createPath: string;
  /** Account name at connect (LinkedIn: a token of an app granted r_member_social). */
  name?: string;
  media?: object;
}

const READABLE: TReadable[] = [
  { platform: 'twitter', createPath: '/2/tweets' },
  { platform: 'threads', createPath: '/threads_publish' },
  {
    platform: 'instagram',
    createPath: '/media_publish',
    media: { images: [{ url: 'https://cdn.example.com/cat.jpg' }] },
  },
  { platform: 'facebook', createPath: '/feed' },
  { platform: 'linkedin', createPath: '/rest/posts', name: LINKEDIN_SIM_MEMBER_READ_TOKEN },
  { platform: 'slack', createPath: 'chat.postMessage' },
  { platform: 'discord', createPath: '/messages' },
  { platform: 'bluesky', createPath: 'createRecord' },
];

describe('lost answers are resolved by reading the network back', () => {
  let api: TTestApi;

  beforeAll(async () => {
    api = await startTestApi({ publisher: true, networkTimeoutMs: 800, readbackSettleMs: 300 });
  });
  afterEach(() => api.sim?.sim.clearFaults());
  afterAll(() => api.close());

  async function account(platform: TPlatform, name?: string) {
    const created = await api.account('pro');
    await api.connect(created.accountId, platform, name);
    return created;
  }

  async function publishB(key: string, body: object, timeoutMs = 15_000): Promise<TPostB> {
    const post = await createB(api, key, body);
    expect((await request(api.app).post(`/v1/posts/${post.id}/publish`).set(bearer(key))).status).toBe(200);
    return settleB(api, key, post.id, timeoutMs);
  }

  it.each(READABLE)(
    '$platform: a timeout after the network stored the post ends published with its id, one copy',
    async (net) => {
      const { apiKey } = await account(net.platform, net.name);
      const m = uniqueMarker(`lost-${net.platform}`);
      api.sim?.sim.addFault({
        platform: net.platform,
        kind: 'hang_after_create',
        remaining: 1,
        pathIncludes: net.createPath,
      });
      const done = await publishB(apiKey, {
        content: `answer lost ${m}`,
        platforms: [net.platform],
        ...(net.media ? { media: net.media } : {}),
      });
      const copies = simPosts(api, net.platform, m);
      expect(copies).toHaveLength(1);
      expect(done.status).toBe('published');
      expect(done.platform_results?.[net.platform]).toEqual({
        success: true,
        post_id: copies[0]?.remoteId,
        post_url: expect.any(String),
        resolved_by: 'readback',
      });
      // Nothing was sent a second time: one create call reached the network.
      const creates = (api.sim?.sim.requests ?? []).filter(
        (r) =>
          r.platform === net.platform &&
          r.method === 'POST' &&
          r.path.includes(net.createPath) &&
          // Meta's publish calls name a container, not the text; only this test publishes there.
          (net.platform === 'instagram' ||
            net.platform === 'threads' ||
            JSON.stringify(r.body ?? '').includes(m)),
      );
      expect(creates).toHaveLength(1);
    },
  );

  it('a read-back that finds nothing is not trusted before READBACK_SETTLE: a slow network is found later, not posted twice', async () => {
    const slow = await startTestApi({ publisher: true, networkTimeoutMs: 800, readbackSettleMs: 4_000 });
    try {
      const created = await slow.account('pro');
      await slow.connect(created.accountId, 'twitter');
      const m = uniqueMarker('slow-x');
      // X takes 1.5 s to store the tweet: the call times out at 0.8 s, the first read finds nothing.
      slow.sim?.sim.addFault({
        platform: 'twitter',
        kind: 'slow',
        delayMs: 1_500,
        remaining: 1,
        pathIncludes: '/2/tweets',
      });
      const post = await createB(slow, created.apiKey, { content: `slow ${m}`, platforms: ['twitter'] });
      await request(slow.app).post(`/v1/posts/${post.id}/publish`).set(bearer(created.apiKey));
      const done = await settleB(slow, created.apiKey, post.id, 20_000);
      const tweets = (slow.sim?.sim.postsOf('twitter') ?? []).filter((p) => p.text.includes(m));
      expect(tweets).toHaveLength(1);
      expect(done.platform_results?.twitter).toEqual({
        success: true,
        post_id: tweets[0]?.remoteId,
        post_url: expect.any(String),
        resolved_by: 'readback',
      });
      const reads = (slow.sim?.sim.requests ?? []).filter((r) => r.path.includes('/2/users/'));
      expect(reads.length).toBeGreaterThanOrEqual(2);
    } finally {
      await slow.close();
    }
  }, 30_000);

  it('a rate-limited read-back is asked again after the wait X gives, never answered by a resend', async () => {
    const { apiKey } = await account('twitter');
    const m = uniqueMarker('limited-read');
    const seen = api.sim?.sim.requests.length ?? 0;
    api.sim?.sim.addFault({
      platform: 'twitter',
      kind: 'hang_after_create',
      remaining: 1,
      pathIncludes: '/2/tweets',
    });
    api.sim?.sim.addFault({
      platform: 'twitter',
      kind: 'rate_limited',
      retryAfterSeconds: 1,
      remaining: 1,
      pathIncludes: '/2/users/',
    });
    const done = await publishB(apiKey, { content: `limited ${m}`, platforms: ['twitter'] });
    const tweets = simPosts(api, 'twitter', m);
    expect(tweets).toHaveLength(1);
    expect(done.platform_results?.twitter).toEqual({
      success: true,
      post_id: tweets[0]?.remoteId,
      post_url: expect.any(String),
      resolved_by: 'readback',
    });
    expect(simRequests(api, 'twitter', '/2/tweets', m)).toHaveLength(1);
    const reads = (api.sim?.sim.requests ?? []).slice(seen).filter((r) => r.path.includes('/2/users/'));
    // The limited read, then the one after the wait that found the tweet.
    expect(reads.length).toBeGreaterThanOrEqual(2);
  });

  it('a timeout the network never stored: read back, absent, sent again once', async () => {
    const { apiKey } = await account('twitter');
    const m = uniqueMarker('dropped');
    api.sim?.sim.addFault({ platform: 'twitter', kind: 'hang', remaining: 1, pathIncludes: '/2/tweets' });
    const done = await publishB(apiKey, { content: `dropped ${m}`, platforms: ['twitter'] });
    expect(done.status).toBe('published');
    const tweets = simPosts(api, 'twitter', m);
    expect(tweets).toHaveLength(1);
    // Sent again after the read-back: not confirmed by reading, so no resolved_by.
    expect(done.platform_results?.twitter).toEqual({
      success: true,
      post_id: tweets[0]?.remoteId,
      post_url: expect.any(String),
    });
    expect(simRequests(api, 'twitter', '/2/tweets', m)).toHaveLength(2);
  });

  it('a network that cannot be read (Telegram) stays unknown with what a person should check; Variant A retry sends it', async () => {
    const { apiKey } = await account('telegram', 'sps-channel');
    const m = uniqueMarker('tg');
    api.sim?.sim.addFault({
      platform: 'telegram',
      kind: 'hang_after_create',
      remaining: 1,
      pathIncludes: 'sendMessage',
    });
    const done = await publishB(apiKey, { content: `telegram ${m}`, platforms: ['telegram'] });
    expect(done.status).toBe('failed');
    const error =
      done.platform_results?.telegram && 'error' in done.platform_results.telegram
        ? done.platform_results.telegram.error
        : '';
    // Which account, which text, which time window, and what to do.
    expect(error).toContain('Telegram may or may not have received this post');
    expect(error).toContain('sps-channel');
    expect(error).toContain(`"telegram ${m}"`);
    expect(error).toMatch(/between \d{4}-\d\d-\d\d \d\d:\d\d UTC and \d{4}-\d\d-\d\d \d\d:\d\d UTC/);
    expect(error).toContain('use retry');
    expect(simPosts(api, 'telegram', m)).toHaveLength(1);

    // The person checked and asks for the resend: Telegram cannot be read, so it is sent.
    const retried = await request(api.app).post(`/api/posts/${done.id}/retry`).set('x-api-key', apiKey);
    expect(retried.status).toBe(200);
    expect((retried.body as { publishResults: TPublishResultA[] }).publishResults).toEqual([
      { platform: 'telegram', success: true, postUrl: expect.any(String) },
    ]);
    expect(simPosts(api, 'telegram', m)).toHaveLength(2);
  });

  it('Variant A retry of an unknown X post reads back first and records the post instead of resending it', async () => {
    const { apiKey } = await account('twitter');
    const m = uniqueMarker('retry-x');
    // The answer is lost and the account cannot be read for now (X refuses the timeline read).
    api.sim?.sim.addFault({
      platform: 'twitter',
      kind: 'hang_after_create',
      remaining: 1,
      pathIncludes: '/2/tweets',
    });
    api.sim?.sim.addFault({ platform: 'twitter', kind: 'rejected', remaining: 1, pathIncludes: '/2/users/' });
    const res = await request(api.app)
      .post('/api/posts')
      .set('x-api-key', apiKey)
      .send({ content: `retry ${m}`, platforms: ['twitter'], published: true });
    expect(res.status).toBe(201);
    const body = res.body as { post: { id: string }; publishResults: TPublishResultA[] };
    expect(body.publishResults).toEqual([
      {
        platform: 'twitter',
        success: false,
        error: expect.stringContaining('X may or may not have received this post'),
      },
    ]);
    const id = body.post.id;
    expect(simPosts(api, 'twitter', m)).toHaveLength(1);

    const retried = await request(api.app).post(`/api/posts/${id}/retry`).set('x-api-key', apiKey);
    expect(retried.status).toBe(200);
    expect((retried.body as { publishResults: TPublishResultA[] }).publishResults).toEqual([
      { platform: 'twitter', success: true, postUrl: expect.any(String), resolvedBy: 'readback' },
    ]);
    const tweets = simPosts(api, 'twitter', m);
    expect(tweets).toHaveLength(1);
    expect(simRequests(api, 'twitter', '/2/tweets', m)).toHaveLength(1);
    const after = await getA(api, apiKey, id);
    expect(after.platformPostIds).toEqual({
      twitter: { id: tweets[0]?.remoteId, url: expect.any(String), resolvedBy: 'readback' },
    });
  });

  it('Variant B: a failed post with an unknown X segment, edited back to a draft and published again, is read back, not resent', async () => {
    const { apiKey } = await account('twitter');
    const m = uniqueMarker('again-b');
    api.sim?.sim.addFault({
      platform: 'twitter',
      kind: 'hang_after_create',
      remaining: 1,
      pathIncludes: '/2/tweets',
    });
    api.sim?.sim.addFault({ platform: 'twitter', kind: 'rejected', remaining: 1, pathIncludes: '/2/users/' });
    const failed = await publishB(apiKey, { content: `again ${m}`, platforms: ['twitter'] });
    expect(failed.status).toBe('failed');
    expect(failed.platform_results?.twitter).toEqual({
      success: false,
      error: expect.stringContaining('X may or may not have received this post'),
    });
    // Editing a failed post makes it a draft again; publishing it asks X first.
    const edited = await request(api.app)
      .put(`/v1/posts/${failed.id}`)
      .set(bearer(apiKey))
      .send({ content: `again ${m}` });
    expect(edited.status).toBe(200);
    expect((await request(api.app).post(`/v1/posts/${failed.id}/publish`).set(bearer(apiKey))).status).toBe(
      200,
    );
    const done = await settleB(api, apiKey, failed.id, 15_000);
    const tweets = simPosts(api, 'twitter', m);
    expect(tweets).toHaveLength(1);
    expect(done.platform_results?.twitter).toEqual({
      success: true,
      post_id: tweets[0]?.remoteId,
      post_url: expect.any(String),
      resolved_by: 'readback',
    });
    expect(simRequests(api, 'twitter', '/2/tweets', m)).toHaveLength(1);
  });
});
