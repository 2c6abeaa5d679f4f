import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
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
    for (const queue of ['publish', 'schedule', 'queue-slot', 'webhook-delivery', 'metrics']) {
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
    expect(names).toEqual(['metrics', 'publish', 'queue-slot', 'schedule', 'webhook-delivery']);
    const basic = await request(api.app).get('/admin/queues/api/queues').auth('ops', TOKEN);
    expect(basic.status).toBe(200);
    const page = await request(api.app).get('/admin/queues').set(bearer(TOKEN));
    expect(page.status).toBe(200);
    expect(page.text).toContain('<html');
  });

  it('turns the board off when ADMIN_TOKEN is unset', async () => {
    expect((await request(off.app).get('/admin/queues/api/queues').set(bearer(TOKEN))).status).toBe(404);
  });

  it('without ADMIN_TOKEN answers /metrics to a loopback socket only, and never through a proxy', async () => {
    // supertest connects from 127.0.0.1: a scraper on the same machine.
    const local = await request(off.app).get('/metrics');
    expect(local.status).toBe(200);
    expect(local.text).toContain('http_request_duration_seconds');
    // A reverse proxy on the same host connects from loopback too, but says whom it forwards.
    for (const [name, value] of [
      ['X-Forwarded-For', '203.0.113.7'],
      ['Forwarded', 'for=203.0.113.7;proto=https'],
      ['X-Real-IP', '203.0.113.7'],
    ] as const) {
      const proxied = await request(off.app).get('/metrics').set(name, value);
      expect(proxied.status).toBe(404);
      expect(proxied.text).not.toContain('http_request_duration_seconds');
    }
  });

  it('without ADMIN_TOKEN and with TRUST_PROXY (a proxy may be in front), /metrics answers nobody', async () => {
    const trusting = await startTestApi({ env: { TRUST_PROXY: 'loopback,192.0.2.0/24,10.0.0.0/8' } });
    const server = trusting.app.listen(0, '0.0.0.0');
    await once(server, 'listening');
    try {
      const port = (server.address() as AddressInfo).port;
      // This machine's own non-loopback address: the socket's remote address is that address, not 127.0.0.1.
      const external = Object.values(networkInterfaces())
        .flat()
        .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;
      if (external) {
        const res = await fetch(`http://${external}:${port}/metrics`);
        expect(res.status).toBe(404);
        expect(await res.text()).not.toContain('http_request_duration_seconds');
      }
      // Whatever the machine has: a header claiming loopback never stands in for the socket.
      const spoofed = await fetch(`http://127.0.0.1:${port}/metrics`, {
        headers: { 'x-forwarded-for': '127.0.0.1' },
      });
      expect(spoofed.status).toBe(404);
      // Nor a plain loopback connection: a proxy on this host that adds no forwarding header looks just so.
      expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(404);
    } finally {
      await new Promise((resolve) => server.close(resolve));
      await trusting.close();
    }
  });

  it('in production /metrics needs ADMIN_TOKEN: without it, not even loopback gets it', async () => {
    const production = await startTestApi({
      env: { NODE_ENV: 'production', ENCRYPTION_KEY: '44'.repeat(32) },
    });
    try {
      const res = await request(production.app).get('/metrics');
      expect(res.status).toBe(404);
      expect(res.text).not.toContain('http_request_duration_seconds');
    } finally {
      await production.close();
    }
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
