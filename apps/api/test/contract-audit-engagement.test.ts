import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';

// The contract's letter (shared/CONTRACT.md: Engagement, Account permissions) on the points the feature
// tests leave out: first_comment on every network without comments or replies, the metrics shape before a
// collection, the refresh limit's 429 as the spec writes it, analytics rows, `permissions` on accounts.

describe('contract audit: engagement and account permissions', () => {
  let api: TTestApi;
  let key: string;
  let accountId: string;
  let otherKey: string;

  beforeAll(async () => {
    api = await startTestApi({ env: { METRICS_REFRESH_PER_HOUR: '2' } });
    ({ apiKey: key, accountId } = await api.account('pro'));
    ({ apiKey: otherKey } = await api.account('pro'));
    for (const p of ['twitter', 'linkedin', 'telegram', 'slack', 'discord', 'tiktok'] as const) {
      await api.connect(accountId, p);
    }
  });
  afterAll(() => api.close());

  describe('engagement', () => {
    it('refuses first_comment (400 naming it) for each network without comments or replies', async () => {
      for (const platform of ['telegram', 'discord', 'slack', 'tiktok']) {
        const res = await request(api.app)
          .post('/v1/posts')
          .set(bearer(key))
          .send({ content: 'hi', platforms: [platform], first_comment: 'first!' });
        expect(res.status).toBe(400);
        expect(res.body.code).toBe('validation_error');
        expect(res.body.details.field).toBe('first_comment');
      }
      const notText = await request(api.app)
        .post('/v1/posts')
        .set(bearer(key))
        .send({ content: 'hi', platforms: ['twitter'], first_comment: 42 });
      expect(notText.status).toBe(400);
      expect(notText.body.details.field).toBe('first_comment');
      const a = await request(api.app)
        .post('/api/posts')
        .set('x-api-key', key)
        .send({ content: 'hi', platforms: ['twitter'], firstComment: ['x'] });
      expect(a.status).toBe(400);
      expect(a.body.error).toMatch(/^firstComment/);
    });

    it('metrics and refresh of another account’s post or an unknown one are 404', async () => {
      const post = await request(api.app)
        .post('/v1/posts')
        .set(bearer(key))
        .send({ content: 'mine', platforms: ['twitter'] });
      for (const path of [
        `/v1/posts/${post.body.id}/metrics`,
        '/v1/posts/00000000-0000-4000-8000-000000000000/metrics',
      ]) {
        const res = await request(api.app).get(path).set(bearer(otherKey));
        expect(res.status).toBe(404);
        expect(res.body.code).toBe('not_found');
      }
    });

    it('refresh is 202, then 429 rate_limited with the spec’s details; analytics answers one row per day', async () => {
      const post = await request(api.app)
        .post('/v1/posts')
        .set(bearer(key))
        .send({ content: 'out', platforms: ['twitter'] });
      // Published on X as the publisher records it (the collection itself is the publisher's tests' part).
      await api.db.postTarget.upsert({
        where: { postId_platform: { postId: post.body.id, platform: 'twitter' } },
        create: {
          postId: post.body.id,
          platform: 'twitter',
          status: 'succeeded',
          remotePostId: '1',
          publishedAt: new Date(),
        },
        update: { status: 'succeeded', remotePostId: '1', publishedAt: new Date() },
      });
      const refresh = () =>
        request(api.app).post(`/v1/posts/${post.body.id}/metrics/refresh`).set(bearer(key));
      expect((await refresh()).status).toBe(202);
      expect((await refresh()).status).toBe(202);
      const limited = await refresh();
      expect(limited.status).toBe(429);
      expect(limited.body.code).toBe('rate_limited');
      expect(limited.body.details).toEqual(
        expect.objectContaining({
          limit: 2,
          remaining: 0,
          reset_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
          retry_after: expect.any(Number),
        }),
      );
      expect(Number(limited.headers['retry-after'])).toBe(limited.body.details.retry_after);
      const metrics = await request(api.app).get(`/v1/posts/${post.body.id}/metrics`).set(bearer(key));
      expect(metrics.body).toEqual({
        post_id: post.body.id,
        platforms: {
          twitter: {
            collected_at: null,
            impressions: null,
            views: null,
            likes: null,
            reposts: null,
            replies: null,
            quotes: null,
            bookmarks: null,
            clicks: null,
          },
        },
      });
      const res = await request(api.app)
        .get('/v1/analytics?from=2026-01-01&to=2026-01-03&platform=twitter')
        .set(bearer(key));
      expect(res.status).toBe(200);
      expect(res.body.days.map((d: { date: string }) => d.date)).toEqual([
        '2026-01-01',
        '2026-01-02',
        '2026-01-03',
      ]);
      expect(res.body.totals).toEqual(expect.objectContaining({ posts: 0 }));
    });
  });

  it('GET /v1/accounts shows permissions on every account', async () => {
    const res = await request(api.app).get('/v1/accounts').set(bearer(key));
    expect(res.status).toBe(200);
    expect(res.body.accounts.length).toBeGreaterThan(0);
    for (const account of res.body.accounts) expect(account).toHaveProperty('permissions');
  });
});
