import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { bullPrefix } from '@sps/queue';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';
import { createB, pollUntil, settleB, simPosts, uniqueMarker } from './pipeline-helpers.js';

/**
 * A publisher killed while it renewed an account's Bluesky session leaves the account's token lock in Redis
 * until the lock's own lifetime lapses (30 s in production). The next process's publish finds no session,
 * asks for a refresh and cannot take the lock within its wait: that says nothing about the account, so the
 * publish is retried, never failed as `auth_expired` with the account disconnected (the SIGKILL failure of
 * apps/publisher/test/crash.test.ts under load).
 */
describe('a session refresh that cannot run yet', () => {
  let api: TTestApi;

  beforeAll(async () => {
    api = await startTestApi({ publisher: true, tokenLockWaitMs: 200, backoffBaseMs: 100 });
  });
  afterAll(async () => {
    await api.close();
  });

  it('a publish whose refresh finds the lock of a killed refresher is retried and published; the account stays connected', async () => {
    const { apiKey, accountId } = await api.account('pro');
    // Connected with the app password as token (no session yet), as the crash test's accounts are.
    const socialId = await api.connect(accountId, 'bluesky');
    // The killed process's lock, held until the publish has met it once.
    const lock = `${bullPrefix(api.env.QUEUE_PREFIX)}:token-lock:${socialId}`;
    await api.redis.set(lock, 'killed', 'PX', 60_000);

    const marker = uniqueMarker('bsky-busy');
    const post = await createB(api, apiKey, { content: `busy ${marker}`, platforms: ['bluesky'] });
    await request(api.app).post(`/v1/posts/${post.id}/publish`).set(bearer(apiKey)).expect(200);
    // The first attempt ends when its refresh gave up waiting for the lock: the segment is marked failed
    // (nothing was sent), and the post either waits for its retry or has failed.
    await pollUntil(
      () => api.db.segmentDelivery.findFirst({ where: { postId: post.id, platform: 'bluesky' } }),
      (row) => row?.status === 'failed',
      20_000,
    );
    await api.redis.del(lock);
    const done = await settleB(api, apiKey, post.id, 20_000);

    expect(done.status).toBe('published');
    expect(simPosts(api, 'bluesky', marker)).toHaveLength(1);
    const account = await api.db.socialAccount.findUnique({ where: { id: socialId } });
    expect(account?.isActive).toBe(true);
  }, 90_000);
});
