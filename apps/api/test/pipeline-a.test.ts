import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';
import {
  createA,
  getA,
  pollUntil,
  simPosts,
  simRequests,
  type TPostA,
  type TPublishResultA,
  uniqueMarker,
} from './pipeline-helpers.js';

interface TPublishBodyA {
  success: boolean;
  post: TPostA;
  publishResults: TPublishResultA[];
}
interface TErrorA {
  error: string;
  fix?: string;
  details?: Record<string, unknown>;
}

function expectErrorA(res: request.Response, status: number): TErrorA {
  expect(res.status).toBe(status);
  const body = res.body as TErrorA;
  expect(typeof body.error).toBe('string');
  for (const k of Object.keys(body)) expect(['error', 'fix', 'details']).toContain(k);
  return body;
}

describe('Variant A publishing pipeline', () => {
  let api: TTestApi;
  let key: string;
  let accountId: string;

  beforeAll(async () => {
    api = await startTestApi({ publisher: true });
    ({ apiKey: key, accountId } = await api.account('pro'));
    for (const p of ['twitter', 'bluesky', 'mastodon', 'linkedin', 'threads'] as const)
      await api.connect(accountId, p);
  });
  afterEach(() => api.sim?.sim.clearFaults());
  afterAll(() => api.close());

  const post = (path: string, apiKey = key) => request(api.app).post(path).set('x-api-key', apiKey);

  it('creates with published: true → 201 with publishResults and platformPostIds', async () => {
    const marker = uniqueMarker('a-now');
    const res = await post('/api/posts').send({
      content: `now ${marker}`,
      platforms: ['twitter', 'bluesky'],
      published: true,
    });
    expect(res.status).toBe(201);
    const body = res.body as TPublishBodyA;
    expect(body.success).toBe(true);
    expect(body.post.published).toBe(true);
    const tweet = simPosts(api, 'twitter', marker)[0];
    const skeet = simPosts(api, 'bluesky', marker)[0];
    expect(body.publishResults).toEqual([
      { platform: 'twitter', success: true, postUrl: expect.stringContaining(tweet?.remoteId ?? '?') },
      { platform: 'bluesky', success: true, postUrl: expect.any(String) },
    ]);
    expect(body.post.platformPostIds).toEqual({
      twitter: { id: tweet?.remoteId, url: body.publishResults[0]?.postUrl },
      bluesky: { id: expect.any(String), url: body.publishResults[1]?.postUrl },
    });
    expect(skeet).toBeDefined();
  });

  it('publishes a draft with POST /publish → 200 with results, then 400 when already published', async () => {
    const marker = uniqueMarker('a-pub');
    const draft = await createA(api, key, { content: `draft ${marker}`, platforms: ['mastodon'] });
    expect(draft.published).toBe(false);
    const res = await post(`/api/posts/${draft.id}/publish`);
    expect(res.status).toBe(200);
    const body = res.body as TPublishBodyA;
    expect(body.success).toBe(true);
    expect(body.publishResults).toEqual([
      { platform: 'mastodon', success: true, postUrl: expect.stringContaining('/@sim/') },
    ]);
    expect(body.post.published).toBe(true);
    const again = expectErrorA(await post(`/api/posts/${draft.id}/publish`), 400);
    expect(again.error).toBe('The post is already published');
    expect(again.fix).toEqual(expect.any(String));
    expect(simPosts(api, 'mastodon', marker)).toHaveLength(1);
  });

  it('retries only the failed networks; 400 when nothing failed', async () => {
    const marker = uniqueMarker('a-retry');
    api.sim?.sim.addFault({
      platform: 'mastodon',
      kind: 'rejected',
      remaining: 1,
      pathIncludes: '/api/v1/statuses',
    });
    const res = await post('/api/posts').send({
      content: `retry ${marker}`,
      platforms: ['twitter', 'mastodon'],
      published: true,
    });
    expect(res.status).toBe(201);
    const body = res.body as TPublishBodyA;
    expect(body.publishResults).toEqual([
      { platform: 'twitter', success: true, postUrl: expect.any(String) },
      { platform: 'mastodon', success: false, error: expect.stringContaining('Mastodon rejected the post') },
    ]);
    expect(body.post.published).toBe(true);
    expect(body.post.platformPostIds).toEqual({
      twitter: { id: expect.any(String), url: expect.any(String) },
      mastodon: { error: expect.stringContaining('Mastodon rejected the post') },
    });

    const retried = await post(`/api/posts/${body.post.id}/retry`);
    expect(retried.status).toBe(200);
    const retryBody = retried.body as TPublishBodyA;
    expect(retryBody.publishResults).toEqual([
      { platform: 'mastodon', success: true, postUrl: expect.any(String) },
    ]);
    expect(retryBody.post.platformPostIds).toEqual({
      twitter: body.post.platformPostIds?.twitter,
      mastodon: { id: expect.any(String), url: expect.any(String) },
    });
    // The successful network got exactly one request.
    expect(simRequests(api, 'twitter', '/2/tweets', marker)).toHaveLength(1);
    expect(simPosts(api, 'twitter', marker)).toHaveLength(1);
    expect(simPosts(api, 'mastodon', marker)).toHaveLength(1);

    const nothing = expectErrorA(await post(`/api/posts/${body.post.id}/retry`), 400);
    expect(nothing.error).toContain('Nothing failed');
    const draft = await createA(api, key, { content: 'never published', platforms: ['twitter'] });
    expectErrorA(await post(`/api/posts/${draft.id}/retry`), 400);
  });

  it('approves a pending post into the queue; 400 when not pending', async () => {
    await request(api.app).put('/api/queue-settings').set(bearer(key)).send({ enabled: false });
    const pending = await createA(api, key, {
      content: 'waiting',
      platforms: ['twitter'],
      queueStatus: 'pending',
    });
    expect(pending.queueStatus).toBe('pending');
    const res = await post(`/api/posts/${pending.id}/approve`);
    expect(res.status).toBe(200);
    expect((res.body as { success: boolean; post: TPostA }).post).toMatchObject({
      id: pending.id,
      queueStatus: 'queued',
      published: false,
    });
    expect((await getA(api, key, pending.id)).queueStatus).toBe('queued');
    const twice = expectErrorA(await post(`/api/posts/${pending.id}/approve`), 400);
    expect(twice.error).toBe('The post is not pending approval');
    const draft = await createA(api, key, { content: 'plain', platforms: ['twitter'] });
    expectErrorA(await post(`/api/posts/${draft.id}/approve`), 400);
  });

  it('answers 403 on publish and retry without an active plan', async () => {
    const none = await api.account('none');
    await api.connect(none.accountId, 'twitter');
    // Variant A cannot create without a plan either; Variant B can, and the post is the same.
    expectErrorA(
      await post('/api/posts', none.apiKey).send({ content: 'x', platforms: ['twitter'], published: true }),
      403,
    );
    const created = await request(api.app)
      .post('/v1/posts')
      .set(bearer(none.apiKey))
      .send({ content: 'no plan', platforms: ['twitter'] });
    expect(created.status).toBe(201);
    const id = (created.body as { id: string }).id;
    const pub = expectErrorA(await post(`/api/posts/${id}/publish`, none.apiKey), 403);
    expect(pub.fix).toContain('plan');
    expectErrorA(await post(`/api/posts/${id}/retry`, none.apiKey), 403);
    expect((await getA(api, none.apiKey, id)).published).toBe(false);
  });

  it('DELETE (deleteFromPlatforms default true) removes the published copies and the post', async () => {
    const marker = uniqueMarker('a-del');
    const res = await post('/api/posts').send({
      content: `delete me ${marker}`,
      platforms: ['twitter', 'mastodon', 'bluesky'],
      segments: [{ content: `second ${marker}` }],
      published: true,
    });
    expect(res.status).toBe(201);
    const id = (res.body as TPublishBodyA).post.id;
    for (const p of ['twitter', 'mastodon', 'bluesky'] as const)
      expect(simPosts(api, p, marker)).toHaveLength(2);

    const del = await request(api.app).delete(`/api/posts/${id}`).set('x-api-key', key);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({
      success: true,
      id,
      deleted: true,
      deleteFromPlatforms: true,
      platformDeletions: { twitter: 'deleting', mastodon: 'deleting', bluesky: 'deleting' },
    });
    expect((await request(api.app).get(`/api/posts/${id}`).set('x-api-key', key)).status).toBe(404);
    const list = (await request(api.app).get('/api/posts').set('x-api-key', key)).body as { posts: TPostA[] };
    expect(list.posts.some((p) => p.id === id)).toBe(false);
    const copies = () =>
      (['twitter', 'mastodon', 'bluesky'] as const).flatMap((p) => simPosts(api, p, marker));
    const final = await pollUntil(
      async () => copies(),
      (c) => c.every((p) => p.deleted),
    );
    expect(final).toHaveLength(6);
    expect(final.every((p) => p.deleted)).toBe(true);
    // The row itself goes once the copies are gone.
    const row = await pollUntil(
      () => api.db.post.findUnique({ where: { id } }),
      (r) => r === null,
    );
    expect(row).toBeNull();
  });

  it('DELETE ?deleteFromPlatforms=false keeps the copies on the networks', async () => {
    const marker = uniqueMarker('a-keep');
    const res = await post('/api/posts').send({
      content: `keep ${marker}`,
      platforms: ['twitter'],
      published: true,
    });
    const id = (res.body as TPublishBodyA).post.id;
    const del = await request(api.app)
      .delete(`/api/posts/${id}?deleteFromPlatforms=false`)
      .set('x-api-key', key);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({
      success: true,
      id,
      deleted: true,
      deleteFromPlatforms: false,
      platformDeletions: {},
    });
    expect((await request(api.app).get(`/api/posts/${id}`).set('x-api-key', key)).status).toBe(404);
    // Give a wrongly enqueued delete job the time to run, then check nothing was removed.
    await new Promise((r) => setTimeout(r, 300));
    expect(simPosts(api, 'twitter', marker).map((p) => p.deleted)).toEqual([false]);
    expect(
      simRequests(api, 'twitter', '/2/tweets/', '').filter(
        (r) => r.method === 'DELETE' && r.path.includes(simPosts(api, 'twitter', marker)[0]?.remoteId ?? '?'),
      ),
    ).toHaveLength(0);
  });

  it('DELETE of a draft removes it at once with nothing to delete on the networks', async () => {
    const draft = await createA(api, key, { content: 'draft to delete', platforms: ['twitter'] });
    const del = await request(api.app).delete(`/api/posts/${draft.id}`).set('x-api-key', key);
    expect(del.status).toBe(200);
    expect(del.body).toMatchObject({ success: true, deleted: true, platformDeletions: {} });
    expect(await api.db.post.findUnique({ where: { id: draft.id } })).toBeNull();
  });
});

describe('Variant A network availability', () => {
  let api: TTestApi;
  beforeAll(async () => {
    api = await startTestApi({ env: { NETWORK_AVAILABILITY: 'twitter=live,threads=pending_approval' } });
  });
  afterAll(() => api.close());

  it('refuses threads while it waits for the network owner approval (400 naming threads)', async () => {
    const { apiKey, accountId } = await api.account('pro');
    await api.connect(accountId, 'threads');
    await api.connect(accountId, 'twitter');
    const now = await request(api.app)
      .post('/api/posts')
      .set('x-api-key', apiKey)
      .send({ content: 'hi', platforms: ['twitter', 'threads'], published: true });
    expect(now.status).toBe(400);
    const body = now.body as TErrorA;
    expect(body.error).toContain('threads');
    expect(body.error).toContain('approval');
    expect(body.fix).toEqual(expect.any(String));
    expect(body.details).toMatchObject({ platforms: ['threads'] });
    // Nothing was created.
    const list = (await request(api.app).get('/api/posts').set('x-api-key', apiKey)).body as {
      posts: TPostA[];
    };
    expect(list.posts).toHaveLength(0);

    const draft = await request(api.app)
      .post('/api/posts')
      .set('x-api-key', apiKey)
      .send({ content: 'later', platforms: ['threads'] });
    expect(draft.status).toBe(201);
    const id = (draft.body as { post: TPostA }).post.id;
    const pub = await request(api.app).post(`/api/posts/${id}/publish`).set('x-api-key', apiKey);
    expect(pub.status).toBe(400);
    expect((pub.body as TErrorA).error).toContain('threads');
    // twitter alone is live.
    const tw = await request(api.app)
      .post('/api/posts')
      .set('x-api-key', apiKey)
      .send({ content: 'fine', platforms: ['twitter'] });
    expect(tw.status).toBe(201);
  });
});
