import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { secretBox } from '@sps/core';
import { JOBS } from '@sps/queue';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';

const PUBLIC_URL = 'https://93.184.216.34/hooks/sps';
const WEBHOOK_KEYS = ['created_at', 'events', 'id', 'is_active', 'updated_at', 'url'];

describe('Variant B webhooks API (/v1/webhooks)', () => {
  let api: TTestApi;
  let key: string;
  let accountId: string;
  let otherKey: string;

  beforeAll(async () => {
    // Private URLs are NOT allowed here: the SSRF guard is on, as in production.
    api = await startTestApi({ env: {} });
    ({ apiKey: key, accountId } = await api.account('pro'));
    ({ apiKey: otherKey } = await api.account('pro'));
  });
  afterAll(() => api.close());

  const post = (body: unknown, apiKey = key) =>
    request(api.app)
      .post('/v1/webhooks')
      .set(bearer(apiKey))
      .send(body as object);
  const create = async (body: Record<string, unknown> = {}) => {
    const res = await post({ url: PUBLIC_URL, events: ['post.published'], ...body });
    expect(res.status).toBe(201);
    return res.body as { id: string; secret: string };
  };

  it('accepts HTTPS only and names the field', async () => {
    const res = await post({ url: 'http://93.184.216.34/hook', events: ['post.published'] });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_error');
    expect(res.body.details.field).toBe('url');
    for (const url of ['ftp://93.184.216.34/', 'not a url', 42]) {
      const bad = await post({ url, events: ['post.published'] });
      expect(bad.status).toBe(400);
      expect(bad.body.details.field).toBe('url');
    }
  });

  it('validates events: a non-empty subset of the five types', async () => {
    for (const events of [[], ['post.deleted'], 'post.published', undefined]) {
      const res = await post({ url: PUBLIC_URL, events });
      expect(res.status).toBe(400);
      expect(String(res.body.details.field)).toMatch(/^events/);
    }
    const extra = await post({ url: PUBLIC_URL, events: ['post.failed'], secret: 'mine' });
    expect(extra.status).toBe(400);
  });

  it('refuses URLs that resolve to loopback, private, link-local, CGNAT or metadata addresses', async () => {
    const refused = [
      'https://127.0.0.1/hook',
      'https://127.8.9.10:8443/hook',
      'https://10.1.2.3/hook',
      'https://172.16.5.4/hook',
      'https://192.168.1.1/hook',
      'https://169.254.169.254/latest/meta-data',
      'https://100.64.0.1/hook',
      'https://0.0.0.0/hook',
      'https://[::1]/hook',
      'https://[::]/hook',
      'https://[fe80::1]/hook',
      'https://[fd00:ec2::254]/hook',
      'https://[::ffff:127.0.0.1]/hook',
      'https://[::ffff:a9fe:a9fe]/hook',
      'https://localhost/hook',
      'https://localhost.:8443/hook',
    ];
    for (const url of refused) {
      const res = await post({ url, events: ['post.published'] });
      expect({ url, status: res.status, field: res.body.details?.field }).toEqual({
        url,
        status: 400,
        field: 'url',
      });
    }
    expect(await api.db.webhook.count()).toBe(0);
  });

  it('creates a webhook and returns its high-entropy secret once; stored sealed', async () => {
    const res = await post({ url: PUBLIC_URL, events: ['post.published', 'post.failed', 'post.published'] });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual([...WEBHOOK_KEYS, 'secret'].sort());
    expect(res.body).toMatchObject({
      url: PUBLIC_URL,
      events: ['post.published', 'post.failed'],
      is_active: true,
    });
    const secret = res.body.secret as string;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);

    const row = await api.db.webhook.findUniqueOrThrow({ where: { id: res.body.id } });
    expect(row.secretEncrypted).not.toContain(secret.slice(6));
    expect(
      secretBox.open(row.secretEncrypted, api.env.encryptionKey, secretBox.sealContext('webhooks', row.id)),
    ).toBe(secret);

    const second = await create();
    expect(second.secret).not.toBe(secret);

    const one = await request(api.app).get(`/v1/webhooks/${res.body.id}`).set(bearer(key));
    expect(one.status).toBe(200);
    expect(Object.keys(one.body).sort()).toEqual(WEBHOOK_KEYS);
    const list = await request(api.app).get('/v1/webhooks').set(bearer(key));
    expect(list.status).toBe(200);
    expect(list.body.webhooks.map((w: { id: string }) => w.id)).toEqual([res.body.id, second.id]);
    for (const w of list.body.webhooks) expect(Object.keys(w).sort()).toEqual(WEBHOOK_KEYS);
    expect(JSON.stringify(list.body)).not.toContain('whsec_');
  });

  it('updates url, events and is_active; re-activating resets the failure count', async () => {
    const { id } = await create();
    const put = (body: unknown) =>
      request(api.app)
        .put(`/v1/webhooks/${id}`)
        .set(bearer(key))
        .send(body as object);

    const events = await put({ events: ['account.connected', 'account.disconnected'] });
    expect(events.status).toBe(200);
    expect(Object.keys(events.body).sort()).toEqual(WEBHOOK_KEYS);
    expect(events.body).toMatchObject({
      id,
      url: PUBLIC_URL,
      events: ['account.connected', 'account.disconnected'],
    });

    expect((await put({ url: 'http://93.184.216.34/x' })).body.details.field).toBe('url');
    expect((await put({ url: 'https://10.0.0.1/x' })).status).toBe(400);
    expect((await put({ events: [] })).status).toBe(400);
    expect((await put({ is_active: 'yes' })).body.details.field).toBe('is_active');

    await api.db.webhook.update({
      where: { id },
      data: { isActive: false, consecutiveFailures: 10, deactivatedAt: new Date() },
    });
    const on = await put({ is_active: true, url: 'https://93.184.216.35/other' });
    expect(on.status).toBe(200);
    expect(on.body).toMatchObject({ is_active: true, url: 'https://93.184.216.35/other' });
    const row = await api.db.webhook.findUniqueOrThrow({ where: { id } });
    expect(row).toMatchObject({ consecutiveFailures: 0, deactivatedAt: null, isActive: true });

    const off = await put({ is_active: false });
    expect(off.body.is_active).toBe(false);
  });

  it('keeps tenants apart: another account gets 404 everywhere', async () => {
    const { id } = await create();
    const other = bearer(otherKey);
    expect((await request(api.app).get(`/v1/webhooks/${id}`).set(other)).status).toBe(404);
    expect(
      (await request(api.app).put(`/v1/webhooks/${id}`).set(other).send({ is_active: false })).status,
    ).toBe(404);
    expect((await request(api.app).delete(`/v1/webhooks/${id}`).set(other)).status).toBe(404);
    expect((await request(api.app).get(`/v1/webhooks/${id}/deliveries`).set(other)).status).toBe(404);
    expect((await request(api.app).get('/v1/webhooks').set(other)).body).toEqual({ webhooks: [] });
    expect((await request(api.app).get('/v1/webhooks/not-a-uuid').set(bearer(key))).status).toBe(404);
    expect((await request(api.app).get('/v1/webhooks').set(bearer('sps_live_nope'))).status).toBe(401);
  });

  it('deletes with 204', async () => {
    const { id } = await create();
    const res = await request(api.app).delete(`/v1/webhooks/${id}`).set(bearer(key));
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await request(api.app).get(`/v1/webhooks/${id}`).set(bearer(key))).status).toBe(404);
    expect((await request(api.app).delete(`/v1/webhooks/${id}`).set(bearer(key))).status).toBe(404);
  });

  it('lists deliveries with paging and retries only failed ones', async () => {
    const { id } = await create({ events: ['account.connected'] });
    const deliveryIds: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const event = await api.db.event.create({
        data: {
          accountId,
          type: 'account.connected',
          data: { account: { id: `a${i}` } },
          dispatchedAt: new Date(),
        },
      });
      const d = await api.db.webhookDelivery.create({
        data: {
          webhookId: id,
          eventId: event.id,
          status: i === 0 ? 'failed' : 'succeeded',
          attempts: 6,
          lastStatusCode: 500,
          lastError: 'HTTP 500',
        },
      });
      deliveryIds.push(d.id);
    }
    const page = await request(api.app)
      .get(`/v1/webhooks/${id}/deliveries?limit=2&offset=0`)
      .set(bearer(key));
    expect(page.status).toBe(200);
    expect(page.body.total).toBe(3);
    expect(page.body.deliveries).toHaveLength(2);
    expect(Object.keys(page.body.deliveries[0]).sort()).toEqual(
      [
        'attempts',
        'created_at',
        'delivered_at',
        'event_id',
        'event_type',
        'id',
        'last_attempt_at',
        'last_error',
        'last_status_code',
        'next_attempt_at',
        'status',
        'updated_at',
      ].sort(),
    );
    const rest = await request(api.app)
      .get(`/v1/webhooks/${id}/deliveries?limit=2&offset=2`)
      .set(bearer(key));
    expect(rest.body.deliveries).toHaveLength(1);
    const all = [...page.body.deliveries, ...rest.body.deliveries].map((d: { id: string }) => d.id).sort();
    expect(all).toEqual([...deliveryIds].sort());
    expect(
      (await request(api.app).get(`/v1/webhooks/${id}/deliveries?limit=0`).set(bearer(key))).body.details
        .field,
    ).toBe('limit');
    expect(
      (await request(api.app).get(`/v1/webhooks/${id}/deliveries?offset=-1`).set(bearer(key))).status,
    ).toBe(400);

    const retry = (deliveryId: string, apiKey = key) =>
      request(api.app).post(`/v1/webhooks/${id}/deliveries/${deliveryId}/retry`).set(bearer(apiKey));
    expect((await retry(deliveryIds[1]!)).status).toBe(409);
    expect((await retry(deliveryIds[0]!, otherKey)).status).toBe(404);
    const ok = await retry(deliveryIds[0]!);
    expect(ok.status).toBe(202);
    expect(ok.body).toMatchObject({ id: deliveryIds[0], status: 'pending', attempts: 0, last_error: null });
    const row = await api.db.webhookDelivery.findUniqueOrThrow({ where: { id: deliveryIds[0]! } });
    const job = await api.queues['webhook-delivery'].getJob(JOBS.webhookDelivery.jobId(row));
    expect(job?.data).toEqual({ deliveryId: deliveryIds[0] });
    expect((await retry(deliveryIds[0]!)).status).toBe(409);
    expect((await retry('00000000-0000-4000-8000-000000000000')).status).toBe(404);
  });
});
