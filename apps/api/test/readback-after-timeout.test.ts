import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';
import { createB, settleB, simPosts, uniqueMarker } from './pipeline-helpers.js';

/**
 * A post call that timed out may still land: the network (here the simulator, slowed past the timeout)
 * stores the request the client gave up on. The read-back that follows at once cannot see it yet, so
 * "absent" is trusted only READBACK_SETTLE after the answer was given up, not after the request left:
 * with a timeout as long as the settle wait, the old count trusted it at once and sent the post again.
 */
describe('read-back after a timeout', () => {
  let api: TTestApi;

  beforeAll(async () => {
    api = await startTestApi({ publisher: true, networkTimeoutMs: 2000, readbackSettleMs: 2000 });
  });
  afterAll(async () => {
    await api.close();
  });

  it('a Threads publish that lands a second after its timeout is found by the read-back, not sent again', async () => {
    const { apiKey, accountId } = await api.account('pro');
    await api.connect(accountId, 'threads');
    // threads_publish stores the post 3 s after it arrived: a second after the client's 2 s timeout.
    api.sim?.sim.addFault({
      platform: 'threads',
      kind: 'slow',
      delayMs: 3000,
      remaining: 1,
      pathIncludes: 'threads_publish',
    });
    const marker = uniqueMarker('late');
    const post = await createB(api, apiKey, { content: `late ${marker}`, platforms: ['threads'] });
    await request(api.app).post(`/v1/posts/${post.id}/publish`).set(bearer(apiKey)).expect(200);
    const done = await settleB(api, apiKey, post.id, 30_000);

    expect(done.status).toBe('published');
    // One publish call reached Threads (a resend would be a second), and it is the post recorded.
    const publishes = (api.sim?.sim.requests ?? []).filter(
      (r) => r.platform === 'threads' && r.path.includes('threads_publish'),
    );
    expect(publishes.length).toBe(1);
    expect(simPosts(api, 'threads', marker)).toHaveLength(1);
    const [row] = await api.db.segmentDelivery.findMany({ where: { postId: post.id } });
    expect(row).toMatchObject({ status: 'sent', attempts: 1 });
  }, 60_000);
});
