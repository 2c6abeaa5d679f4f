import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';

describe('smoke', () => {
  let api: TTestApi;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(() => api.close());

  it('creates through A and reads through B', async () => {
    const { apiKey } = await api.account('pro');
    const created = await request(api.app)
      .post('/api/posts')
      .set('x-api-key', apiKey)
      .send({ content: 'hi', platforms: ['twitter'] });
    expect(created.status).toBe(201);
    const read = await request(api.app).get(`/v1/posts/${created.body.post.id}`).set(bearer(apiKey));
    expect(read.status).toBe(200);
    expect(read.body.status).toBe('draft');
  });

  it('answers health and readiness', async () => {
    expect((await request(api.app).get('/healthz')).status).toBe(200);
    expect((await request(api.app).get('/readyz')).body).toEqual({
      status: 'ready',
      postgres: true,
      redis: true,
    });
  });
});
