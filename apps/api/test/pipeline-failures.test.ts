import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { TPlatform } from '@sps/core';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';
import {
  createB,
  getA,
  settleB,
  simPosts,
  simRequests,
  type TPostA,
  type TPostB,
  type TPublishResultA,
  uniqueMarker,
} from './pipeline-helpers.js';

interface TAccountB {
  id: string;
  platform: string;
  is_active: boolean;
  needs_reauth: boolean;
}

const CREATE_PATH: Partial<Record<TPlatform, string>> = {
  twitter: '/2/tweets',
  mastodon: '/api/v1/statuses',
  linkedin: '/rest/posts',
};

describe('publishing failures: token expiry, retries, unknown outcomes, partial threads', () => {
  let api: TTestApi;

  beforeAll(async () => {
    api = await startTestApi({ publisher: true, networkTimeoutMs: 1000 });
  });
  afterEach(() => api.sim?.sim.clearFaults());
  afterAll(() => api.close());

  async function freshAccount(...platforms: TPlatform[]) {
    const account = await api.account('pro');
    const ids: Partial<Record<TPlatform, string>> = {};
    for (const p of platforms) ids[p] = await api.connect(account.accountId, p);
    return { ...account, ids };
  }

  async function publishB(key: string, body: object): Promise<TPostB> {
    const post = await createB(api, key, body);
    expect((await request(api.app).post(`/v1/posts/${post.id}/publish`).set(bearer(key))).status).toBe(200);
    return settleB(api, key, post.id, 10_000);
  }

  const createRequests = (platform: TPlatform, marker: string) =>
    simRequests(api, platform, CREATE_PATH[platform] ?? '?', marker);

  it('an expired token fails that network with a reconnect hint and marks the account inactive / needs_reauth', async () => {
    const { apiKey, accountId, ids } = await freshAccount('twitter', 'mastodon');
    const m = uniqueMarker('expired');
    api.sim?.sim.addFault({ platform: 'twitter', kind: 'auth_expired', remaining: 1 });
    const done = await publishB(apiKey, { content: `token ${m}`, platforms: ['twitter', 'mastodon'] });
    expect(done.status).toBe('published');
    expect(done.platform_results?.twitter).toEqual({
      success: false,
      error: expect.stringMatching(/Reconnect the X account/),
    });
    expect(done.platform_results?.mastodon?.success).toBe(true);
    // Not retried: an expired token does not heal by itself.
    expect(createRequests('twitter', m)).toHaveLength(1);

    const accountsB = (await request(api.app).get('/v1/accounts').set(bearer(apiKey))).body as {
      accounts: TAccountB[];
    };
    expect(accountsB.accounts.find((a) => a.id === ids.twitter)).toMatchObject({
      is_active: false,
      needs_reauth: true,
    });
    expect(accountsB.accounts.find((a) => a.id === ids.mastodon)).toMatchObject({
      is_active: true,
      needs_reauth: false,
    });
    const accountsA = (await request(api.app).get('/api/accounts').set('x-api-key', apiKey)).body as {
      accounts: { id: string; needsReauth: boolean }[];
    };
    expect(accountsA.accounts.find((a) => a.id === ids.twitter)?.needsReauth).toBe(true);
    expect(accountsA.accounts.find((a) => a.id === ids.mastodon)?.needsReauth).toBe(false);

    const events = await api.db.event.findMany({ where: { accountId, type: 'account.disconnected' } });
    expect(events).toHaveLength(1);
    expect((events[0]?.data as { account: TAccountB } | undefined)?.account).toMatchObject({
      id: ids.twitter,
      platform: 'twitter',
      is_active: false,
    });

    // The next publish to twitter is refused up front: no valid connected account.
    const next = await createB(api, apiKey, { content: 'again', platforms: ['twitter'] });
    const res = await request(api.app).post(`/v1/posts/${next.id}/publish`).set(bearer(apiKey));
    expect(res.status).toBe(422);
    expect((res.body as { code: string }).code).toBe('no_connected_account');
  });

  it('an expired token through Variant A answers with the reconnect hint in publishResults', async () => {
    const { apiKey } = await freshAccount('bluesky');
    api.sim?.sim.addFault({ platform: 'bluesky', kind: 'auth_expired', remaining: 1 });
    const res = await request(api.app)
      .post('/api/posts')
      .set('x-api-key', apiKey)
      .send({ content: 'expired a', platforms: ['bluesky'], published: true });
    expect(res.status).toBe(201);
    const body = res.body as { post: TPostA; publishResults: TPublishResultA[] };
    expect(body.publishResults).toEqual([
      { platform: 'bluesky', success: false, error: expect.stringMatching(/[Rr]econnect/) },
    ]);
    expect(body.post.published).toBe(false);
    expect(body.post.platformPostIds).toEqual({ bluesky: { error: body.publishResults[0]?.error } });
    const accounts = (await request(api.app).get('/api/accounts').set('x-api-key', apiKey)).body as {
      accounts: { needsReauth: boolean }[];
    };
    expect(accounts.accounts.map((a) => a.needsReauth)).toEqual([true]);
  });

  it('a 5xx is retried and ends with exactly one post on the network', async () => {
    const { apiKey } = await freshAccount('twitter');
    const m = uniqueMarker('5xx');
    api.sim?.sim.addFault({
      platform: 'twitter',
      kind: 'server_error',
      remaining: 1,
      pathIncludes: '/2/tweets',
    });
    const done = await publishB(apiKey, { content: `flaky ${m}`, platforms: ['twitter'] });
    expect(done.status).toBe('published');
    expect(done.platform_results?.twitter?.success).toBe(true);
    expect(createRequests('twitter', m)).toHaveLength(2);
    expect(simPosts(api, 'twitter', m)).toHaveLength(1);
  });

  it('a 429 is retried after the wait the network asked for', async () => {
    const { apiKey } = await freshAccount('mastodon');
    const m = uniqueMarker('429');
    api.sim?.sim.addFault({
      platform: 'mastodon',
      kind: 'rate_limited',
      retryAfterSeconds: 1,
      remaining: 1,
      pathIncludes: '/api/v1/statuses',
    });
    const done = await publishB(apiKey, { content: `limited ${m}`, platforms: ['mastodon'] });
    expect(done.status).toBe('published');
    const sent = createRequests('mastodon', m);
    expect(sent).toHaveLength(2);
    const gap = Date.parse(sent[1]?.at ?? '') - Date.parse(sent[0]?.at ?? '');
    expect(gap).toBeGreaterThanOrEqual(850);
    expect(simPosts(api, 'mastodon', m)).toHaveLength(1);
  });

  it('a rejection fails the network at once, without retry', async () => {
    const { apiKey } = await freshAccount('linkedin');
    const m = uniqueMarker('rejected');
    api.sim?.sim.addFault({ platform: 'linkedin', kind: 'rejected', remaining: 1 });
    const done = await publishB(apiKey, { content: `refused ${m}`, platforms: ['linkedin'] });
    expect(done.status).toBe('failed');
    expect(done.platform_results).toEqual({
      linkedin: { success: false, error: expect.stringContaining('LinkedIn rejected the post') },
    });
    expect(createRequests('linkedin', m)).toHaveLength(1);
    expect(simPosts(api, 'linkedin', m)).toHaveLength(0);
  });

  it('a timeout after twitter created the post (no idempotency key) is read back, recorded, and not resent', async () => {
    const { apiKey } = await freshAccount('twitter');
    const m = uniqueMarker('hang-x');
    api.sim?.sim.addFault({
      platform: 'twitter',
      kind: 'hang_after_create',
      remaining: 1,
      pathIncludes: '/2/tweets',
    });
    const res = await request(api.app)
      .post('/api/posts')
      .set('x-api-key', apiKey)
      .send({ content: `maybe ${m}`, platforms: ['twitter'], published: true });
    expect(res.status).toBe(201);
    const body = res.body as { post: TPostA; publishResults: TPublishResultA[] };
    expect(body.publishResults).toEqual([
      { platform: 'twitter', success: true, postUrl: expect.any(String), resolvedBy: 'readback' },
    ]);
    const tweets = simPosts(api, 'twitter', m);
    expect(tweets).toHaveLength(1);
    expect(body.post.platformPostIds).toEqual({
      twitter: { id: tweets[0]?.remoteId, url: expect.any(String), resolvedBy: 'readback' },
    });
    const target = await api.db.postTarget.findFirst({
      where: { postId: body.post.id, platform: 'twitter' },
    });
    expect(target?.status).toBe('succeeded');
    // Still one tweet and one request a while later: nothing resent it.
    await new Promise((r) => setTimeout(r, 300));
    expect(createRequests('twitter', m)).toHaveLength(1);
    expect(simPosts(api, 'twitter', m)).toHaveLength(1);
  });

  it('a timeout after mastodon created the status is resent with the same Idempotency-Key: one status', async () => {
    const { apiKey } = await freshAccount('mastodon');
    const m = uniqueMarker('hang-m');
    api.sim?.sim.addFault({
      platform: 'mastodon',
      kind: 'hang_after_create',
      remaining: 1,
      pathIncludes: '/api/v1/statuses',
    });
    const done = await publishB(apiKey, { content: `dedupe ${m}`, platforms: ['mastodon'] });
    expect(done.status).toBe('published');
    const sent = createRequests('mastodon', m);
    expect(sent).toHaveLength(2);
    expect(sent[0]?.headers['idempotency-key']).toEqual(expect.any(String));
    expect(sent[1]?.headers['idempotency-key']).toBe(sent[0]?.headers['idempotency-key']);
    const statuses = simPosts(api, 'mastodon', m);
    expect(statuses).toHaveLength(1);
    expect(done.platform_results?.mastodon).toEqual({
      success: true,
      post_id: statuses[0]?.remoteId,
      post_url: expect.any(String),
    });
  });

  it('a thread cut after its first segment, then retried through A, never sends the first segment again', async () => {
    const { apiKey } = await freshAccount('twitter');
    const m = uniqueMarker('cut');
    const sim = api.sim?.sim;
    if (!sim) throw new Error('simulator missing');
    // Reject the second tweet of this thread only (the fault is added when that request is recorded).
    const record = sim.record.bind(sim);
    sim.record = (platform, req) => {
      const entry = record(platform, req);
      if (platform === 'twitter' && createRequests('twitter', m).length === 2)
        sim.addFault({ platform: 'twitter', kind: 'rejected', remaining: 1 });
      return entry;
    };
    try {
      const res = await request(api.app)
        .post('/api/posts')
        .set('x-api-key', apiKey)
        .send({
          content: `${m} one`,
          platforms: ['twitter'],
          segments: [{ content: `${m} two` }, { content: `${m} three` }],
          published: true,
        });
      expect(res.status).toBe(201);
      const body = res.body as { post: TPostA; publishResults: TPublishResultA[] };
      expect(body.publishResults).toEqual([
        { platform: 'twitter', success: false, error: expect.stringContaining('X rejected the post') },
      ]);
      expect(simPosts(api, 'twitter', m).map((p) => p.text)).toEqual([`${m} one`]);
    } finally {
      sim.record = record;
    }
    const list = (await request(api.app).get('/api/posts').set('x-api-key', apiKey)).body as {
      posts: TPostA[];
    };
    const id = list.posts[0]?.id ?? '?';
    const retried = await request(api.app).post(`/api/posts/${id}/retry`).set('x-api-key', apiKey);
    expect(retried.status).toBe(200);
    expect((retried.body as { publishResults: TPublishResultA[] }).publishResults).toEqual([
      { platform: 'twitter', success: true, postUrl: expect.any(String) },
    ]);
    const tweets = simPosts(api, 'twitter', m);
    expect(tweets.map((t) => t.text)).toEqual([`${m} one`, `${m} two`, `${m} three`]);
    expect(tweets.map((t) => t.replyTo)).toEqual([null, tweets[0]?.remoteId, tweets[1]?.remoteId]);
    // one + rejected two + two + three
    expect(createRequests('twitter', m)).toHaveLength(4);
    expect(simRequests(api, 'twitter', '/2/tweets', `${m} one`)).toHaveLength(1);
    const after = await getA(api, apiKey, id);
    expect(after.published).toBe(true);
    expect(after.platformPostIds).toEqual({ twitter: { id: tweets[0]?.remoteId, url: expect.any(String) } });
  });
});
