import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';
import { mcpClients } from './mcp-helpers.js';

// The webhook tools of the MCP server, through the SDK's own client over HTTP, with the SSRF guard on as
// in production (an IP literal that is public needs no DNS).

const PUBLIC_URL = 'https://93.184.216.34/hooks/mcp';
const WEBHOOK_KEYS = ['created_at', 'events', 'id', 'is_active', 'updated_at', 'url'];

describe('MCP webhook tools', () => {
  let api: TTestApi;
  let server: Server;
  let url: URL;
  const mcp = mcpClients(() => url);
  const { client, call } = mcp;

  beforeAll(async () => {
    api = await startTestApi();
    server = await new Promise((resolve) => {
      const s = api.app.listen(0, '127.0.0.1', () => resolve(s));
    });
    url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
  });
  afterAll(async () => {
    await mcp.closeAll();
    await new Promise((r) => server.close(r));
    await api.close();
  });

  it('describes the webhook tools with their rules for an agent', async () => {
    const { apiKey } = await api.account('pro');
    const tools = (await (await client(apiKey)).listTools()).tools;
    const names = tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'list_webhooks',
        'create_webhook',
        'get_webhook',
        'update_webhook',
        'delete_webhook',
        'list_webhook_deliveries',
        'retry_webhook_delivery',
      ]),
    );
    const create = tools.find((t) => t.name === 'create_webhook');
    const text = JSON.stringify(create);
    for (const word of ['HTTPS', 'SSRF', 'secret', 'post.published', 'account.disconnected']) {
      expect(text).toContain(word);
    }
    // The REST schema's enum of the five event types, and its required fields.
    const properties = (create?.inputSchema.properties ?? {}) as Record<
      string,
      { items?: { enum?: string[] } }
    >;
    const events = properties.events;
    expect(events?.items?.enum).toHaveLength(5);
    expect(create?.inputSchema.required).toEqual(expect.arrayContaining(['url', 'events']));
  });

  it('create_webhook repeated (its result lost) answers the first webhook and its secret, making one', async () => {
    const { apiKey, accountId } = await api.account('pro');
    const c = await client(apiKey);
    const args = { url: PUBLIC_URL, events: ['post.published'] };
    const first = await call(c, 'create_webhook', args);
    const again = await call(c, 'create_webhook', args);
    expect(first.isError).toBeFalsy();
    expect(again.structuredContent).toEqual(first.structuredContent);
    expect(await api.db.webhook.count({ where: { accountId } })).toBe(1);
    // Another explicit key is another webhook.
    const other = await call(c, 'create_webhook', { ...args, idempotency_key: 'second-hook' });
    expect(other.structuredContent?.id).not.toBe(first.structuredContent?.id);
    await c.close();
  });

  it('creates (secret once), lists, gets, updates and deletes a webhook through tools', async () => {
    const { apiKey } = await api.account('pro');
    const c = await client(apiKey);
    const created = await call(c, 'create_webhook', {
      url: PUBLIC_URL,
      events: ['post.published', 'post.failed', 'post.published'],
    });
    expect(created.isError).toBeFalsy();
    const webhook = created.structuredContent as Record<string, unknown>;
    expect(Object.keys(webhook).sort()).toEqual([...WEBHOOK_KEYS, 'secret'].sort());
    expect(webhook).toMatchObject({
      url: PUBLIC_URL,
      events: ['post.published', 'post.failed'],
      is_active: true,
    });
    expect(webhook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const id = webhook.id as string;

    // The same webhook over REST: one service, one store.
    const rest = await request(api.app).get(`/v1/webhooks/${id}`).set(bearer(apiKey));
    expect(rest.status).toBe(200);

    const list = await call(c, 'list_webhooks');
    const listed = (list.structuredContent?.webhooks ?? []) as { id: string }[];
    expect(listed.map((w) => w.id)).toEqual([id]);
    expect(JSON.stringify(list)).not.toContain('whsec_');
    const got = await call(c, 'get_webhook', { id });
    expect(Object.keys(got.structuredContent ?? {}).sort()).toEqual(WEBHOOK_KEYS);

    const updated = await call(c, 'update_webhook', {
      id,
      url: 'https://93.184.216.35/other',
      events: ['account.connected'],
      is_active: false,
    });
    expect(updated.isError).toBeFalsy();
    expect(updated.structuredContent).toMatchObject({
      id,
      url: 'https://93.184.216.35/other',
      events: ['account.connected'],
      is_active: false,
    });
    // Omitted fields keep their value.
    const partial = await call(c, 'update_webhook', { id, is_active: true });
    expect(partial.structuredContent).toMatchObject({ url: 'https://93.184.216.35/other', is_active: true });

    const deleted = await call(c, 'delete_webhook', { id });
    expect(deleted.structuredContent).toEqual({ deleted: true, id });
    const gone = await call(c, 'get_webhook', { id });
    expect(gone.isError).toBe(true);
    expect(gone.structuredContent?.code).toBe('not_found');
    expect((await call(c, 'list_webhooks')).structuredContent).toEqual({ webhooks: [] });
  });

  it('refuses HTTP and private URLs as tool errors carrying a fix, creating nothing', async () => {
    const { apiKey, accountId } = await api.account('pro');
    const c = await client(apiKey);
    const http = await call(c, 'create_webhook', {
      url: 'http://93.184.216.34/hook',
      events: ['post.failed'],
    });
    expect(http.isError).toBe(true);
    expect(http.structuredContent?.code).toBe('validation_error');
    expect(http.content[0]?.text).toContain('HTTPS');
    expect(http.structuredContent?.fix).toEqual(expect.any(String));

    for (const target of ['https://127.0.0.1/hook', 'https://169.254.169.254/latest/meta-data']) {
      const refused = await call(c, 'create_webhook', { url: target, events: ['post.failed'] });
      expect(refused.isError).toBe(true);
      expect(refused.structuredContent?.code).toBe('validation_error');
      expect(refused.structuredContent?.details).toMatchObject({ issues: [{ field: 'url' }] });
      expect(String(refused.structuredContent?.fix)).toContain('public');
      expect(refused.content[0]?.text).toContain('Fix:');
    }
    const unknownEvent = await call(c, 'create_webhook', { url: PUBLIC_URL, events: ['post.deleted'] });
    expect(unknownEvent.isError).toBe(true);
    expect(await api.db.webhook.count({ where: { accountId } })).toBe(0);

    // An update to a private URL is refused the same way and changes nothing.
    const { structuredContent } = await call(c, 'create_webhook', {
      url: PUBLIC_URL,
      events: ['post.failed'],
    });
    const id = structuredContent?.id as string;
    const moved = await call(c, 'update_webhook', { id, url: 'https://10.0.0.1/hook' });
    expect(moved.isError).toBe(true);
    expect((await call(c, 'get_webhook', { id })).structuredContent?.url).toBe(PUBLIC_URL);
  });

  it("keeps another account's webhook invisible: every tool answers not_found", async () => {
    const owner = await api.account('pro');
    const other = await api.account('pro');
    const created = await call(await client(owner.apiKey), 'create_webhook', {
      url: PUBLIC_URL,
      events: ['post.published'],
    });
    const id = created.structuredContent?.id as string;
    const c = await client(other.apiKey);
    for (const [name, args] of [
      ['get_webhook', { id }],
      ['update_webhook', { id, is_active: false }],
      ['delete_webhook', { id }],
      ['list_webhook_deliveries', { id }],
      ['retry_webhook_delivery', { id, delivery_id: '00000000-0000-4000-8000-000000000000' }],
    ] as const) {
      const result = await call(c, name, args);
      expect({ name, isError: result.isError, code: result.structuredContent?.code }).toEqual({
        name,
        isError: true,
        code: 'not_found',
      });
      expect(result.structuredContent?.fix).toEqual(expect.any(String));
    }
    expect((await call(c, 'list_webhooks')).structuredContent).toEqual({ webhooks: [] });
    // Still there, unchanged, for its owner.
    const row = await api.db.webhook.findUniqueOrThrow({ where: { id } });
    expect(row.isActive).toBe(true);
  });

  it('lists deliveries with paging and retries only a failed one', async () => {
    const { apiKey, accountId } = await api.account('pro');
    const c = await client(apiKey);
    const created = await call(c, 'create_webhook', { url: PUBLIC_URL, events: ['account.connected'] });
    const id = created.structuredContent?.id as string;
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
    const page = await call(c, 'list_webhook_deliveries', { id, limit: 2 });
    expect(page.isError).toBeFalsy();
    expect(page.structuredContent?.total).toBe(3);
    const first = page.structuredContent?.deliveries as { id: string; event_type: string }[];
    expect(first).toHaveLength(2);
    expect(first[0]?.event_type).toBe('account.connected');
    const rest = await call(c, 'list_webhook_deliveries', { id, limit: 2, offset: 2 });
    const second = rest.structuredContent?.deliveries as { id: string }[];
    expect(second).toHaveLength(1);
    expect([...first, ...second].map((d) => d.id).sort()).toEqual([...deliveryIds].sort());
    const tooMany = await call(c, 'list_webhook_deliveries', { id, limit: 101 });
    expect(tooMany.isError).toBe(true);

    const retry = (deliveryId: string) => call(c, 'retry_webhook_delivery', { id, delivery_id: deliveryId });
    const notFailed = await retry(deliveryIds[1] as string);
    expect(notFailed.structuredContent?.code).toBe('conflict');
    const retried = await retry(deliveryIds[0] as string);
    expect(retried.isError).toBeFalsy();
    expect(retried.structuredContent).toMatchObject({ id: deliveryIds[0], status: 'pending', attempts: 0 });

    // A failed delivery of an inactive webhook: the fix names the tool that re-activates it.
    await api.db.webhookDelivery.update({
      where: { id: deliveryIds[0] as string },
      data: { status: 'failed' },
    });
    await call(c, 'update_webhook', { id, is_active: false });
    const inactive = await retry(deliveryIds[0] as string);
    expect(inactive.structuredContent?.code).toBe('conflict');
    expect(String(inactive.structuredContent?.fix)).toContain('update_webhook');
  });
});
