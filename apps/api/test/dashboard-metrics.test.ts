import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { emptyFigures, hashPassword } from '@sps/core';
import { createMetricsRepository, createOwnerRepository } from '@sps/db';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';
import { createB, settleB } from './pipeline-helpers.js';

// The dashboard's engagement calls: the public engagement routes mounted behind the session
// (/dashboard/api/v1/...), so the service's rules hold there too: tenancy, CSRF on the refresh, the refresh
// limit; and the analytics' top posts (by engagement) in both variants.

const PASSWORD = 'figures page password';

async function signedIn(api: TTestApi, accountId: string) {
  await createOwnerRepository(api.db).setPasswordHash(accountId, await hashPassword(PASSWORD));
  const row = await api.db.account.findUniqueOrThrow({ where: { id: accountId } });
  const agent = request.agent(api.app);
  const res = await agent.post('/dashboard/api/session').send({ email: row.ownerEmail, password: PASSWORD });
  expect(res.status).toBe(200);
  return { agent, csrf: res.body.csrf_token as string };
}

describe('dashboard engagement routes', () => {
  let api: TTestApi;
  let key: string;
  let accountId: string;
  let postId: string;
  let secondId: string;
  let unreadId: string;

  async function published(content: string, platforms: string[]) {
    const post = await createB(api, key, { content, platforms });
    expect((await request(api.app).post(`/v1/posts/${post.id}/publish`).set(bearer(key))).status).toBe(200);
    expect((await settleB(api, key, post.id)).status).toBe('published');
    return post.id;
  }

  beforeAll(async () => {
    api = await startTestApi({ publisher: true, env: { METRICS_REFRESH_PER_HOUR: '2' } });
    ({ apiKey: key, accountId } = await api.account('pro'));
    await api.connect(accountId, 'twitter');
    await api.connect(accountId, 'mastodon');
    postId = await published('the well-liked one', ['twitter', 'mastodon']);
    secondId = await published('the quieter one', ['twitter']);
    unreadId = await published('never read yet', ['mastodon']);
    const repo = createMetricsRepository(api.db);
    const figures = (f: Partial<ReturnType<typeof emptyFigures>>) => ({ ...emptyFigures(), ...f });
    await repo.record([
      // The older twitter snapshot of the first post is superseded by the newer one (the latest counts).
      {
        accountId,
        postId,
        platform: 'twitter',
        figures: figures({ likes: 1 }),
        error: null,
        collectedAt: new Date(Date.now() - 60_000),
      },
      {
        accountId,
        postId,
        platform: 'twitter',
        figures: figures({ likes: 10, reposts: 2, impressions: 500 }),
        error: null,
      },
      {
        accountId,
        postId,
        platform: 'mastodon',
        figures: null,
        error: 'The account no longer grants read access. Reconnect it to collect figures.',
      },
      {
        accountId,
        postId: secondId,
        platform: 'twitter',
        figures: figures({ likes: 3, replies: 1, clicks: 1, impressions: 9000 }),
        error: null,
      },
    ]);
  }, 60_000);
  afterAll(() => api.close());

  it("shows a post's figures per network, with the network's error and what to do", async () => {
    const { agent } = await signedIn(api, accountId);
    const res = await agent.get(`/dashboard/api/v1/posts/${postId}/metrics`);
    expect(res.status).toBe(200);
    expect(res.body.post_id).toBe(postId);
    expect(res.body.platforms.twitter).toMatchObject({
      likes: 10,
      reposts: 2,
      impressions: 500,
      views: null,
    });
    expect(res.body.platforms.mastodon).toEqual({ error: expect.stringMatching(/Reconnect/) });
    // Not signed in: 401, the figures are not shown.
    expect((await request(api.app).get(`/dashboard/api/v1/posts/${postId}/metrics`)).status).toBe(401);
  });

  it("never shows or refreshes another account's post (404)", async () => {
    const other = await api.account('pro');
    const { agent, csrf } = await signedIn(api, other.accountId);
    expect((await agent.get(`/dashboard/api/v1/posts/${postId}/metrics`)).status).toBe(404);
    const refresh = await agent
      .post(`/dashboard/api/v1/posts/${postId}/metrics/refresh`)
      .set('x-csrf-token', csrf);
    expect(refresh.status).toBe(404);
    expect((await agent.get(`/dashboard/api/v1/posts/not-a-post/metrics`)).status).toBe(404);
    const analytics = await agent.get('/dashboard/api/v1/analytics');
    expect(analytics.status).toBe(200);
    expect(analytics.body.totals.posts).toBe(0);
    expect(analytics.body.top_posts).toEqual([]);
  });

  it('answers analytics over a range with the top posts by engagement', async () => {
    const { agent } = await signedIn(api, accountId);
    const today = new Date().toISOString().slice(0, 10);
    const res = await agent.get(`/dashboard/api/v1/analytics?from=${today}&to=${today}`);
    expect(res.status).toBe(200);
    expect(res.body.totals).toMatchObject({ posts: 3, likes: 13, impressions: 9500 });
    // Engagement: 10 likes + 2 reposts beats 3 likes + 1 reply + 1 click, though the second had more impressions;
    // the post without any collected figure is not listed.
    expect(res.body.top_posts).toEqual([
      {
        post_id: postId,
        text: 'the well-liked one',
        published_at: expect.any(String),
        platforms: ['mastodon', 'twitter'],
        engagement: 12,
        ...emptyFigures(),
        likes: 10,
        reposts: 2,
        impressions: 500,
      },
      expect.objectContaining({ post_id: secondId, engagement: 5, platforms: ['twitter'] }),
    ]);
    expect(res.body.top_posts.map((p: { post_id: string }) => p.post_id)).not.toContain(unreadId);

    const onlyMastodon = await agent.get(
      `/dashboard/api/v1/analytics?from=${today}&to=${today}&platform=mastodon`,
    );
    expect(onlyMastodon.body.top_posts).toEqual([]);
    const bad = await agent.get('/dashboard/api/v1/analytics?from=2026-02-30');
    expect(bad.status).toBe(400);

    const a = await request(api.app).get(`/api/analytics?from=${today}&to=${today}`).set('x-api-key', key);
    expect(a.status).toBe(200);
    expect(a.body.topPosts[0]).toMatchObject({ postId, engagement: 12, publishedAt: expect.any(String) });
    expect(a.body.topPosts[0]).not.toHaveProperty('post_id');
  });

  // Last: a refresh collects for real (the publisher runs), replacing the snapshots recorded above.
  it('refreshes only with the session’s CSRF token, within the refresh limit', async () => {
    const { agent, csrf } = await signedIn(api, accountId);
    const path = `/dashboard/api/v1/posts/${postId}/metrics/refresh`;
    const missing = await agent.post(path);
    expect(missing.status).toBe(403);
    expect(missing.body.code).toBeDefined();
    expect((await agent.post(path).set('x-csrf-token', 'wrong')).status).toBe(403);
    const ok = await agent.post(path).set('x-csrf-token', csrf);
    expect(ok.status).toBe(202);
    expect(ok.body).toEqual({ post_id: postId, status: 'collecting' });
    // METRICS_REFRESH_PER_HOUR=2 per account: the second passes, the third is refused with what to do.
    expect((await agent.post(path).set('x-csrf-token', csrf)).status).toBe(202);
    const limited = await agent.post(path).set('x-csrf-token', csrf);
    expect(limited.status).toBe(429);
    expect(limited.body.details.fix).toMatch(/Wait \d+ seconds/);
  });
});
