import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { TPlatform } from '@sps/core';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';
import {
  createB,
  pollUntil,
  settleB,
  simPosts,
  simRequests,
  type TPostB,
  type TPublishResultA,
  uniqueMarker,
} from './pipeline-helpers.js';

// A segment sent more than once (a 429 then a timeout) and read-backs that must not take another post's
// copy for the lost one.

async function publishB(api: TTestApi, key: string, body: object, timeoutMs = 20_000): Promise<TPostB> {
  const post = await createB(api, key, body);
  expect((await request(api.app).post(`/v1/posts/${post.id}/publish`).set(bearer(key))).status).toBe(200);
  return settleB(api, key, post.id, timeoutMs);
}

describe('READBACK_SETTLE counts from the latest send', () => {
  const NETWORKS: { platform: TPlatform; createPath: string }[] = [
    { platform: 'twitter', createPath: '/2/tweets' },
    { platform: 'slack', createPath: 'chat.postMessage' },
  ];

  it.each(NETWORKS)(
    '$platform: a 429, then a send the network stores slowly: the read-back waits for the second send, one copy',
    async ({ platform, createPath }) => {
      const slow = await startTestApi({
        publisher: true,
        networkTimeoutMs: 800,
        readbackSettleMs: 4_000,
        backoffBaseMs: 50,
      });
      try {
        const created = await slow.account('pro');
        await slow.connect(created.accountId, platform);
        const m = uniqueMarker(`resend-${platform}`);
        // Attempt 1: 429 (wait 5 s), nothing stored. Attempt 2: stored after 2.5 s, the call times out at
        // 0.8 s; its first read finds nothing. The first write-ahead is more than READBACK_SETTLE old by
        // then, the second send is not: trusting "absent" would post a second copy.
        slow.sim?.sim.addFault({
          platform,
          kind: 'rate_limited',
          retryAfterSeconds: 5,
          remaining: 1,
          pathIncludes: createPath,
        });
        slow.sim?.sim.addFault({
          platform,
          kind: 'slow',
          delayMs: 2_500,
          remaining: 1,
          pathIncludes: createPath,
        });
        const done = await publishB(
          slow,
          created.apiKey,
          { content: `slow ${m}`, platforms: [platform] },
          40_000,
        );
        const copies = simPosts(slow, platform, m);
        expect(copies).toHaveLength(1);
        // The 429'd call and the slow one: nothing was sent a third time.
        expect(simRequests(slow, platform, createPath, m)).toHaveLength(2);
        expect(done.status).toBe('published');
        expect(done.platform_results?.[platform]).toEqual({
          success: true,
          post_id: copies[0]?.remoteId,
          post_url: expect.any(String),
          resolved_by: 'readback',
        });
      } finally {
        await slow.close();
      }
    },
    60_000,
  );
});

describe('a read-back never takes another post for the lost one', () => {
  let api: TTestApi;
  beforeAll(async () => {
    api = await startTestApi({ publisher: true, networkTimeoutMs: 800, readbackSettleMs: 300 });
  });
  afterEach(() => api.sim?.sim.clearFaults());
  afterAll(() => api.close());

  const NETWORKS: { platform: TPlatform; createPath: string }[] = [
    { platform: 'twitter', createPath: '/2/tweets' },
    { platform: 'slack', createPath: 'chat.postMessage' },
  ];

  it.each(NETWORKS)(
    '$platform: two posts that differ only by their link are not taken for each other',
    async ({ platform, createPath }) => {
      const created = await api.account('pro');
      await api.connect(created.accountId, platform);
      const m = uniqueMarker(`link-${platform}`);
      const a = await publishB(api, created.apiKey, {
        content: `New article ${m}: https://blog.example.com/a`,
        platforms: [platform],
      });
      expect(a.status).toBe('published');
      // B's request is taken and never stored nor answered: B is not on the network.
      api.sim?.sim.addFault({ platform, kind: 'hang', remaining: 1, pathIncludes: createPath });
      const b = await publishB(api, created.apiKey, {
        content: `New article ${m}: https://blog.example.com/b`,
        platforms: [platform],
      });
      const copies = simPosts(api, platform, m);
      expect(copies).toHaveLength(2);
      const idOf = (p: TPostB) =>
        (p.platform_results?.[platform] as { post_id?: string } | undefined)?.post_id;
      expect(idOf(b)).toBeDefined();
      expect(idOf(b)).not.toBe(idOf(a));
      expect(b.platform_results?.[platform]).not.toHaveProperty('resolved_by');
    },
  );

  // X refuses the same text twice from one account (403 duplicate content), Slack takes it.
  it.each([{ platform: 'slack' as const, createPath: 'chat.postMessage' }])(
    '$platform: a post with the same text as one already recorded is sent, not given that post’s id',
    async ({ platform, createPath }) => {
      const created = await api.account('pro');
      await api.connect(created.accountId, platform);
      const m = uniqueMarker(`same-${platform}`);
      const a = await publishB(api, created.apiKey, { content: `Same words ${m}`, platforms: [platform] });
      expect(a.status).toBe('published');
      // Some time later the same words again; the answer is lost and the network never stored it.
      api.sim?.sim.addFault({ platform, kind: 'hang', remaining: 1, pathIncludes: createPath });
      const b = await publishB(api, created.apiKey, { content: `Same words ${m}`, platforms: [platform] });
      const idOf = (p: TPostB) =>
        (p.platform_results?.[platform] as { post_id?: string } | undefined)?.post_id;
      expect(b.status).toBe('published');
      expect(idOf(b)).not.toBe(idOf(a));
      expect(simPosts(api, platform, m)).toHaveLength(2);
    },
  );
});

describe('publishing a failed post again keeps what may have reached the network', () => {
  it('X: a final attempt that gave up while X was still storing the tweet; POST /api/posts/{id}/publish reads it back instead of resending', async () => {
    const api = await startTestApi({
      publisher: true,
      networkTimeoutMs: 800,
      readbackSettleMs: 300,
      backoffBaseMs: 20,
    });
    try {
      const created = await api.account('pro');
      await api.connect(created.accountId, 'twitter');
      const m = uniqueMarker('gave-up');
      // Seven attempts: X takes the request and never stores nor answers it; each read finds nothing and
      // the next attempt sends again. The eighth and last: X stores the tweet 2 s after the call timed out,
      // the read right after the timeout finds nothing, and the attempt gives up with the segment in doubt.
      api.sim?.sim.addFault({ platform: 'twitter', kind: 'hang', remaining: 7, pathIncludes: '/2/tweets' });
      api.sim?.sim.addFault({
        platform: 'twitter',
        kind: 'slow',
        delayMs: 2_000,
        remaining: 1,
        pathIncludes: '/2/tweets',
      });
      const failed = await publishB(
        api,
        created.apiKey,
        { content: `gave up ${m}`, platforms: ['twitter'] },
        60_000,
      );
      expect(failed.status).toBe('failed');
      // In doubt, not "gave up": the settle wait counts from the timeout, so the read right after it is not
      // taken for an answer, and X indeed stores the tweet afterwards.
      expect(failed.platform_results?.twitter).toEqual({
        success: false,
        error: expect.stringContaining('X did not show it yet when this attempt gave up'),
      });
      await pollUntil(
        async () => simPosts(api, 'twitter', m).length,
        (n) => n === 1,
        10_000,
      );

      const again = await request(api.app)
        .post(`/api/posts/${failed.id}/publish`)
        .set('x-api-key', created.apiKey);
      expect(again.status).toBe(200);
      const tweets = simPosts(api, 'twitter', m);
      expect(tweets).toHaveLength(1);
      expect((again.body as { publishResults: TPublishResultA[] }).publishResults).toEqual([
        {
          platform: 'twitter',
          success: true,
          postUrl: expect.stringContaining(tweets[0]?.remoteId ?? '?'),
          resolvedBy: 'readback',
        },
      ]);
      // Eight sends of the first publish, none since.
      expect(simRequests(api, 'twitter', '/2/tweets', m)).toHaveLength(8);
    } finally {
      await api.close();
    }
  }, 120_000);
});
