import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';

const TOKEN = 'operator-token-0123456789';

describe('operator surface', () => {
  let api: TTestApi;
  let off: TTestApi;
  beforeAll(async () => {
    api = await startTestApi({ env: { ADMIN_TOKEN: TOKEN } });
    off = await startTestApi();
  });
  afterAll(async () => {
    await api.close();
    await off.close();
  });

  it('exposes request durations by route pattern and queue counts at /metrics', async () => {
    const { apiKey } = await api.account('pro');
    const created = await request(api.app)
      .post('/v1/posts')
      .set(bearer(apiKey))
      .send({ content: 'm', platforms: ['twitter'] });
    await request(api.app).get(`/v1/posts/${created.body.id}`).set(bearer(apiKey));
    const res = await request(api.app).get('/metrics').set(bearer(TOKEN));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/plain/);
    expect(res.text).toMatch(
      /http_request_duration_seconds_count\{method="GET",route="\/v1\/posts\/:id",status="200"\} 1/,
    );
    expect(res.text).toMatch(
      /http_request_duration_seconds_count\{method="POST",route="\/v1\/posts",status="201"\} 1/,
    );
    expect(res.text).not.toContain(created.body.id);
    for (const queue of ['publish', 'schedule', 'queue-slot', 'webhook-delivery']) {
      expect(res.text).toContain(`queue_jobs{queue="${queue}",state="waiting"}`);
    }
  });

  it('guards Bull Board with ADMIN_TOKEN (bearer or basic) and lists every queue', async () => {
    expect((await request(api.app).get('/admin/queues/api/queues')).status).toBe(401);
    expect(
      (await request(api.app).get('/admin/queues/api/queues').set(bearer('wrong-token-0123456789'))).status,
    ).toBe(401);
    const listed = await request(api.app).get('/admin/queues/api/queues').set(bearer(TOKEN));
    expect(listed.status).toBe(200);
    const names = (listed.body.queues as { name: string }[]).map((q) => q.name).sort();
    expect(names).toEqual(['publish', 'queue-slot', 'schedule', 'webhook-delivery']);
    const basic = await request(api.app).get('/admin/queues/api/queues').auth('ops', TOKEN);
    expect(basic.status).toBe(200);
    const page = await request(api.app).get('/admin/queues').set(bearer(TOKEN));
    expect(page.status).toBe(200);
    expect(page.text).toContain('<html');
  });

  it('turns the board and /metrics off when ADMIN_TOKEN is unset', async () => {
    expect((await request(off.app).get('/admin/queues/api/queues').set(bearer(TOKEN))).status).toBe(404);
    expect((await request(off.app).get('/metrics').set(bearer(TOKEN))).status).toBe(404);
  });

  it('guards /metrics with ADMIN_TOKEN: a tenant key or no key gets 401, never the metrics', async () => {
    const { apiKey } = await api.account('pro');
    for (const res of [
      await request(api.app).get('/metrics'),
      await request(api.app).get('/metrics').set(bearer(apiKey)),
      await request(api.app).get('/metrics').set(bearer('wrong-token-0123456789')),
    ]) {
      expect(res.status).toBe(401);
      expect(res.text).not.toContain('http_request_duration_seconds');
    }
    expect((await request(api.app).get('/metrics').auth('prometheus', TOKEN)).status).toBe(200);
  });
});
