import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { blueskyRecordKey, createConnectors } from '@sps/networks';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';
import { createB, settleB, simPosts, simRequests, uniqueMarker } from './pipeline-helpers.js';

// Bluesky records are written at a key derived from (post, network, segment) and the post's creation time,
// so the publisher may send a segment again after a lost answer: the PDS holds at most one record there.

describe('Bluesky record keys through the publisher', () => {
  let api: TTestApi;

  beforeAll(async () => {
    api = await startTestApi({ publisher: true, networkTimeoutMs: 1000 });
  });
  afterEach(() => api.sim?.sim.clearFaults());
  afterAll(() => api.close());

  async function publish(content: string) {
    const account = await api.account('pro');
    await api.connect(account.accountId, 'bluesky');
    const post = await createB(api, account.apiKey, { content, platforms: ['bluesky'] });
    const started = await request(api.app).post(`/v1/posts/${post.id}/publish`).set(bearer(account.apiKey));
    expect(started.status).toBe(200);
    const done = await settleB(api, account.apiKey, post.id, 15_000);
    const row = await api.db.post.findUniqueOrThrow({ where: { id: post.id } });
    return { done, postId: post.id, createdAt: row.createdAt };
  }
  const creates = (m: string) => simRequests(api, 'bluesky', 'createRecord', m);
  const rkeyOf = (body: unknown) => (body as { rkey?: string }).rkey;

  it('writes at the key derived from (post, network, segment) and the creation time', async () => {
    const m = uniqueMarker('rkey');
    const { done, postId, createdAt } = await publish(`keyed ${m}`);
    expect(done.status).toBe('published');
    const key = blueskyRecordKey(`${postId}-bluesky-0`, createdAt);
    expect(creates(m).map((r) => rkeyOf(r.body))).toEqual([key]);
    expect(done.platform_results?.bluesky).toMatchObject({
      success: true,
      post_id: expect.stringContaining(key),
    });
  });

  it('a lost answer whose read-back also failed is sent again at the same key: one record, published', async () => {
    const m = uniqueMarker('lost');
    const sim = api.sim?.sim;
    sim?.addFault({
      platform: 'bluesky',
      kind: 'hang_after_create',
      remaining: 1,
      pathIncludes: 'createRecord',
    });
    sim?.addFault({ platform: 'bluesky', kind: 'server_error', remaining: 1, pathIncludes: 'getRecord' });
    const { done } = await publish(`twice ${m}`);
    expect(done.status).toBe('published');
    const sent = creates(m);
    // The first create landed but its answer was lost; the retry was refused at the taken key and the
    // record read back.
    expect(sent).toHaveLength(2);
    expect(rkeyOf(sent[1]?.body)).toBe(rkeyOf(sent[0]?.body));
    const records = simPosts(api, 'bluesky', m);
    expect(records).toHaveLength(1);
    expect(done.platform_results?.bluesky).toMatchObject({ success: true, post_id: records[0]?.remoteId });
  });

  it('a segment a crashed attempt wrote, left `sending`, is read back at its record key and not sent again', async () => {
    const m = uniqueMarker('crash');
    const sim = api.sim;
    if (!sim) throw new Error('simulator missing');
    // No publisher runs while "the crashed attempt" happens: the job waits in Redis.
    await api.stopPublisher();
    try {
      const account = await api.account('pro');
      await api.connect(account.accountId, 'bluesky');
      const text = `after a crash ${m}`;
      const post = await createB(api, account.apiKey, { content: text, platforms: ['bluesky'] });
      const started = await request(api.app).post(`/v1/posts/${post.id}/publish`).set(bearer(account.apiKey));
      expect(started.status).toBe(200);
      const { createdAt } = await api.db.post.findUniqueOrThrow({ where: { id: post.id } });
      const idempotencyKey = `${post.id}-bluesky-0`;
      // The crashed attempt: its write-ahead row, and the record it wrote before the process died.
      await api.db.segmentDelivery.create({
        data: { postId: post.id, platform: 'bluesky', segmentIndex: 0, status: 'sending', idempotencyKey },
      });
      const bluesky = createConnectors({ baseUrls: sim.baseUrls, timeoutMs: 2000 }).bluesky;
      if (!bluesky) throw new Error('no bluesky connector');
      const crashed = await bluesky.publish({
        account: {
          id: 'crashed',
          platform: 'bluesky',
          accountName: 'bluesky-user',
          externalId: 'user.bsky.social',
          instanceUrl: null,
          token: 'token-bluesky-user',
        },
        text,
        media: null,
        replyTo: null,
        root: null,
        idempotencyKey,
        postCreatedAt: createdAt,
      });
      if (!crashed.ok) throw new Error(crashed.failure.message);

      await api.startPublisher();
      const done = await settleB(api, account.apiKey, post.id, 15_000);
      expect(done.status).toBe('published');
      expect(done.platform_results?.bluesky).toEqual({
        success: true,
        post_id: crashed.remoteId,
        post_url: expect.any(String),
        resolved_by: 'readback',
      });
      // Read back at its record key before anything is sent: found, so never sent again. One record.
      expect(creates(m)).toHaveLength(1);
      expect(simPosts(api, 'bluesky', m)).toHaveLength(1);
    } finally {
      if (!api.publisher) await api.startPublisher();
    }
  });
});
