import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';

describe('publishing end to end (smoke)', () => {
  let api: TTestApi;
  beforeAll(async () => {
    api = await startTestApi({ publisher: true });
  });
  afterAll(() => api.close());

  it('publishes a thread through B and records per-network results', async () => {
    const { apiKey, accountId } = await api.account('pro');
    await api.connect(accountId, 'twitter');
    await api.connect(accountId, 'mastodon');
    const created = await request(api.app)
      .post('/v1/posts')
      .set(bearer(apiKey))
      .send({
        content: 'main',
        platforms: ['twitter', 'mastodon'],
        segments: [{ content: 'one' }, { content: 'two' }],
      });
    expect(created.status).toBe(201);
    const published = await request(api.app).post(`/v1/posts/${created.body.id}/publish`).set(bearer(apiKey));
    expect(published.status).toBe(200);
    expect(published.body.status).toBe('publishing');
    let post = published.body;
    for (let i = 0; i < 100 && post.status === 'publishing'; i += 1) {
      await new Promise((r) => setTimeout(r, 50));
      post = (await request(api.app).get(`/v1/posts/${created.body.id}`).set(bearer(apiKey))).body;
    }
    expect(post.status).toBe('published');
    expect(post.platform_results.twitter.success).toBe(true);
    expect(post.platform_results.mastodon.success).toBe(true);
    const tweets = api.sim?.sim.postsOf('twitter') ?? [];
    expect(tweets).toHaveLength(3);
    expect(tweets[1]?.replyTo).toBe(tweets[0]?.remoteId);
  });

  it('publishes through A and answers with the results', async () => {
    const { apiKey, accountId } = await api.account('pro');
    await api.connect(accountId, 'bluesky');
    const res = await request(api.app)
      .post('/api/posts')
      .set('x-api-key', apiKey)
      .send({ content: 'hello', platforms: ['bluesky'], published: true });
    expect(res.status).toBe(201);
    expect(res.body.post.published).toBe(true);
    expect(res.body.publishResults).toEqual([
      { platform: 'bluesky', success: true, postUrl: expect.any(String) },
    ]);
  });
});
