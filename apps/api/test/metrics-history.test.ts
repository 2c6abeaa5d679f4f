import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { emptyFigures, METRICS_HISTORY_LIMIT } from '@sps/core';
import { createMetricsRepository } from '@sps/db';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';
import { createB, settleB } from './pipeline-helpers.js';

// A post's figures over time (`?history=true`): every collection per network, oldest first, beside the
// latest; absent unless asked (the contract's answer keeps its keys); both variants; bad values named.

describe('post metrics history', () => {
  let api: TTestApi;
  let key: string;
  let accountId: string;
  let postId: string;

  beforeAll(async () => {
    api = await startTestApi({ publisher: true });
    ({ apiKey: key, accountId } = await api.account('pro'));
    await api.connect(accountId, 'twitter');
    await api.connect(accountId, 'mastodon');
    await api.connect(accountId, 'telegram');
    const post = await createB(api, key, {
      content: 'over time',
      platforms: ['twitter', 'mastodon', 'telegram'],
    });
    postId = post.id;
    expect((await request(api.app).post(`/v1/posts/${postId}/publish`).set(bearer(key))).status).toBe(200);
    expect((await settleB(api, key, postId)).status).toBe('published');
  });
  afterAll(() => api.close());

  const at = (minutesAgo: number) => new Date(Date.now() - minutesAgo * 60_000);

  it('lists each network’s collections oldest first, an unread one with its error; only when asked', async () => {
    const figures = (likes: number) => ({ ...emptyFigures(), likes, impressions: likes * 10 });
    await createMetricsRepository(api.db).record([
      { accountId, postId, platform: 'twitter', figures: figures(5), error: null, collectedAt: at(1) },
      { accountId, postId, platform: 'twitter', figures: figures(1), error: null, collectedAt: at(60) },
      { accountId, postId, platform: 'twitter', figures: null, error: 'X was busy.', collectedAt: at(30) },
      { accountId, postId, platform: 'mastodon', figures: null, error: 'Reconnect.', collectedAt: at(2) },
    ]);

    const plain = await request(api.app).get(`/v1/posts/${postId}/metrics`).set(bearer(key));
    expect(plain.status).toBe(200);
    for (const value of Object.values(plain.body.platforms)) expect(value).not.toHaveProperty('history');

    const b = await request(api.app).get(`/v1/posts/${postId}/metrics?history=true`).set(bearer(key));
    expect(b.status).toBe(200);
    expect(b.body.platforms.twitter).toEqual({
      collected_at: expect.any(String),
      ...figures(5),
      history: [
        { collected_at: expect.any(String), ...figures(1) },
        { collected_at: expect.any(String), error: 'X was busy.' },
        { collected_at: expect.any(String), ...figures(5) },
      ],
    });
    const times = (b.body.platforms.twitter.history as { collected_at: string }[]).map((p) =>
      Date.parse(p.collected_at),
    );
    expect([...times].sort((x, y) => x - y)).toEqual(times);
    expect(b.body.platforms.twitter.collected_at).toBe(b.body.platforms.twitter.history[2].collected_at);
    expect(b.body.platforms.mastodon).toEqual({
      error: 'Reconnect.',
      history: [{ collected_at: expect.any(String), error: 'Reconnect.' }],
    });
    // Telegram reports nothing: its reason, and an empty history.
    expect(b.body.platforms.telegram).toEqual({ error: expect.stringMatching(/Telegram/), history: [] });

    const a = await request(api.app).get(`/api/posts/${postId}/metrics?history=true`).set(bearer(key));
    expect(a.status).toBe(200);
    expect(a.body.platforms.twitter.history).toEqual([
      { collectedAt: expect.any(String), ...figures(1) },
      { collectedAt: expect.any(String), error: 'X was busy.' },
      { collectedAt: expect.any(String), ...figures(5) },
    ]);
    expect(a.body.platforms.twitter.collectedAt).toBe(a.body.platforms.twitter.history[2].collectedAt);

    const off = await request(api.app).get(`/v1/posts/${postId}/metrics?history=false`).set(bearer(key));
    expect(off.body).toEqual(plain.body);
  });

  it(`keeps the latest ${METRICS_HISTORY_LIMIT} collections of a network`, async () => {
    const rows = Array.from({ length: METRICS_HISTORY_LIMIT + 5 }, (_, i) => ({
      accountId,
      postId,
      platform: 'mastodon' as const,
      figures: { ...emptyFigures(), likes: i },
      error: null,
      // Newer than the collections of the test before (a minute ago and on).
      collectedAt: new Date(Date.now() - 60_000 + i * 100),
    }));
    await createMetricsRepository(api.db).record(rows);
    const res = await request(api.app).get(`/v1/posts/${postId}/metrics?history=true`).set(bearer(key));
    const history = res.body.platforms.mastodon.history as { likes: number }[];
    expect(history).toHaveLength(METRICS_HISTORY_LIMIT);
    expect(history[0]?.likes).toBe(5);
    expect(history.at(-1)?.likes).toBe(METRICS_HISTORY_LIMIT + 4);
  });

  it('refuses a history value that is not true or false, naming the field, in both variants', async () => {
    const b = await request(api.app).get(`/v1/posts/${postId}/metrics?history=yes`).set(bearer(key));
    expect(b.status).toBe(400);
    expect(b.body.details.issues).toEqual([{ field: 'history', message: 'must be true or false' }]);
    const a = await request(api.app).get(`/api/posts/${postId}/metrics?history=1`).set(bearer(key));
    expect(a.status).toBe(400);
    expect(a.body.error).toBe('history: must be true or false');
    const twice = await request(api.app)
      .get(`/v1/posts/${postId}/metrics?history=true&history=true`)
      .set(bearer(key));
    expect(twice.status).toBe(400);
  });

  it('shows another account’s post as not found, history or not', async () => {
    const other = await api.account('pro');
    const res = await request(api.app)
      .get(`/v1/posts/${postId}/metrics?history=true`)
      .set(bearer(other.apiKey));
    expect(res.status).toBe(404);
  });
});
