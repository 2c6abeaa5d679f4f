import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';

type TToolResult = {
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
  content: { type: string; text?: string }[];
};

describe('MCP server (POST /mcp)', () => {
  let api: TTestApi;
  let server: Server;
  let url: URL;

  async function client(key: string): Promise<Client> {
    const c = new Client({ name: 'test-agent', version: '1.0.0' });
    await c.connect(
      new StreamableHTTPClientTransport(url, {
        requestInit: { headers: { Authorization: `Bearer ${key}` } },
      }),
    );
    return c;
  }
  const call = async (c: Client, name: string, args: Record<string, unknown> = {}) =>
    (await c.callTool({ name, arguments: args })) as TToolResult;

  beforeAll(async () => {
    api = await startTestApi({ publisher: true });
    server = await new Promise((resolve) => {
      const s = api.app.listen(0, '127.0.0.1', () => resolve(s));
    });
    url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    await api.close();
  });

  it('initializes and lists a tool for every capability', async () => {
    const { apiKey } = await api.account('pro');
    const c = await client(apiKey);
    const names = (await c.listTools()).tools.map((t) => t.name).sort();
    expect(names).toEqual(
      expect.arrayContaining([
        'approve_post',
        'create_post',
        'create_preset',
        'create_webhook',
        'delete_post',
        'delete_webhook',
        'get_post',
        'get_queue_settings',
        'get_webhook',
        'list_accounts',
        'list_posts',
        'list_presets',
        'list_webhook_deliveries',
        'list_webhooks',
        'publish_post',
        'retry_post',
        'retry_webhook_delivery',
        'update_post',
        'update_queue_settings',
        'update_webhook',
      ]),
    );
    const create = (await c.listTools()).tools.find((t) => t.name === 'create_post');
    expect(create?.description).toContain('280');
    expect(JSON.stringify(create?.inputSchema)).toContain('"maxItems":24');
    const publish = (await c.listTools()).tools.find((t) => t.name === 'publish_post');
    expect(publish?.description).toContain('hourly publish limit');
    await c.close();
  });

  it('create_post and publish_post run under an idempotency key: a repeated call gets the first result', async () => {
    const { apiKey, accountId } = await api.account('pro');
    await api.connect(accountId, 'mastodon');
    const c = await client(apiKey);
    const args = { content: 'said twice', platforms: ['mastodon'] };
    // No key given: one is derived from the tool and its arguments.
    const first = await call(c, 'create_post', args);
    const again = await call(c, 'create_post', args);
    expect(first.isError).toBeFalsy();
    expect(again.structuredContent?.id).toBe(first.structuredContent?.id);
    expect((again as { _meta?: Record<string, unknown> })._meta?.idempotent_replayed).toBe(true);
    expect(await api.db.post.count({ where: { accountId } })).toBe(1);
    // Explicit keys: two keys are two posts; one key with other arguments is refused.
    const k1 = await call(c, 'create_post', { ...args, idempotency_key: 'agent-1' });
    const k2 = await call(c, 'create_post', { ...args, idempotency_key: 'agent-2' });
    expect(k1.structuredContent?.id).not.toBe(k2.structuredContent?.id);
    const reused = await call(c, 'create_post', {
      content: 'other',
      platforms: ['mastodon'],
      idempotency_key: 'agent-1',
    });
    expect(reused.isError).toBe(true);
    expect(reused.structuredContent?.code).toBe('idempotency_key_reused');
    expect(await api.db.post.count({ where: { accountId } })).toBe(3);
    // A publish whose result was lost, called again, answers the first result instead of "already publishing".
    const id = first.structuredContent?.id;
    const published = await call(c, 'publish_post', { id });
    const republished = await call(c, 'publish_post', { id });
    expect(published.isError).toBeFalsy();
    expect(republished.isError).toBeFalsy();
    expect(republished.structuredContent).toEqual(published.structuredContent);
    expect((await api.db.post.findUniqueOrThrow({ where: { id: String(id) } })).publishAttempt).toBe(1);
    await c.close();
  });

  it('creates a post through a tool, readable through GET /v1/posts/{id}', async () => {
    const { apiKey } = await api.account('pro');
    const c = await client(apiKey);
    const result = await call(c, 'create_post', {
      content: 'from an agent',
      platforms: ['twitter'],
      segments: [{ content: 'reply' }],
    });
    expect(result.isError).toBeFalsy();
    const id = result.structuredContent?.id as string;
    const read = await request(api.app).get(`/v1/posts/${id}`).set(bearer(apiKey));
    expect(read.status).toBe(200);
    expect(read.body.content).toBe('from an agent');
    expect(read.body.segments).toEqual([{ content: 'reply', media_urls: [] }]);
    await c.close();
  });

  it('publishes through a tool against the simulator', async () => {
    const { apiKey, accountId } = await api.account('pro');
    await api.connect(accountId, 'mastodon');
    const c = await client(apiKey);
    const created = await call(c, 'create_post', { content: 'agent publish', platforms: ['mastodon'] });
    const published = await call(c, 'publish_post', { id: created.structuredContent?.id, wait: true });
    expect(published.isError).toBeFalsy();
    expect(published.structuredContent?.status).toBe('published');
    expect(api.sim?.sim.postsOf('mastodon').some((p) => p.text === 'agent publish')).toBe(true);
    await c.close();
  });

  it("list_accounts shows each account's permissions and what a reconnect would grant", async () => {
    const { apiKey, accountId } = await api.account('pro');
    const id = await api.connect(accountId, 'threads', 'mcp_threads');
    await api.db.socialAccount.update({
      where: { id },
      data: { grantedScopes: 'threads_basic threads_content_publish' },
    });
    const c = await client(apiKey);
    const listed = await call(c, 'list_accounts');
    const accounts = listed.structuredContent?.accounts as Record<string, unknown>[];
    expect(accounts.find((a) => a.id === id)).toMatchObject({
      permissions: ['threads_basic', 'threads_content_publish'],
      reconnect_to_grant: ['threads_read_replies', 'threads_delete', 'threads_manage_insights'],
    });
    await c.close();
  });

  it('returns user mistakes as tool errors with a fix, not protocol failures', async () => {
    const { apiKey } = await api.account('pro');
    const c = await client(apiKey);
    const created = await call(c, 'create_post', { content: 'no account', platforms: ['twitter'] });
    const failed = await call(c, 'publish_post', { id: created.structuredContent?.id });
    expect(failed.isError).toBe(true);
    expect(failed.structuredContent?.code).toBe('no_connected_account');
    expect(failed.structuredContent?.fix).toEqual(expect.any(String));
    expect(failed.content[0]?.text).toContain('Fix:');
    const invalid = await call(c, 'create_post', { content: '', platforms: ['twitter'] });
    expect(invalid.isError).toBe(true);
    expect(invalid.content[0]?.text).toContain('content');
    await c.close();
  });

  it("does not show another account's post", async () => {
    const owner = await api.account('pro');
    const other = await api.account('pro');
    const c1 = await client(owner.apiKey);
    const created = await call(c1, 'create_post', { content: 'private', platforms: ['twitter'] });
    const c2 = await client(other.apiKey);
    const stolen = await call(c2, 'get_post', { id: created.structuredContent?.id });
    expect(stolen.isError).toBe(true);
    expect(stolen.structuredContent?.code).toBe('not_found');
    const list = await call(c2, 'list_posts', {});
    expect(list.structuredContent?.total).toBe(0);
    await c1.close();
    await c2.close();
  });

  it('refuses a request without a key or with a bad key at the transport (401)', async () => {
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    };
    const missing = await request(api.app)
      .post('/mcp')
      .set('Accept', 'application/json, text/event-stream')
      .send(initialize);
    expect(missing.status).toBe(401);
    const bad = await request(api.app)
      .post('/mcp')
      .set('Authorization', 'Bearer sps_live_nope')
      .set('Accept', 'application/json, text/event-stream')
      .send(initialize);
    expect(bad.status).toBe(401);
    await expect(client('sps_live_invalid')).rejects.toThrow();
  });

  it("counts MCP calls against the key's per-minute limit (X-RateLimit headers)", async () => {
    const { apiKey } = await api.account('free');
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    };
    const res = await request(api.app)
      .post('/mcp')
      .set(bearer(apiKey))
      .set('Accept', 'application/json, text/event-stream')
      .send(initialize);
    expect(res.status).toBe(200);
    expect(res.headers['x-ratelimit-limit']).toBe('60');
    expect(res.headers['x-ratelimit-remaining']).toBe('59');
  });

  it('offers the queue schedule as a resource', async () => {
    const { apiKey } = await api.account('pro');
    const c = await client(apiKey);
    await call(c, 'create_post', { content: 'queued one', platforms: ['twitter'], queue_status: 'queued' });
    const resource = await c.readResource({ uri: 'queue://schedule' });
    const body = JSON.parse((resource.contents[0] as { text: string }).text);
    expect(body.queued).toHaveLength(1);
    expect(body.settings.intervalHours).toBe(4);
    // The next free slots come after the queued post's slot, 4 hours apart within the window.
    expect(body.next_free_slots).toHaveLength(5);
    const firstFree = Date.parse(body.next_free_slots[0]);
    expect(firstFree).toBeGreaterThan(Date.parse(body.queued[0].expected_slot));
    await c.close();
  });

  it('sets, checks and removes a poll through update_post', async () => {
    const { apiKey } = await api.account('pro');
    const c = await client(apiKey);
    const created = await call(c, 'create_post', { content: 'poll later', platforms: ['mastodon'] });
    const id = created.structuredContent?.id as string;
    const poll = { options: ['yes', 'no'], durationMinutes: 60 };
    const withPoll = await call(c, 'update_post', { id, poll });
    expect(withPoll.isError).toBeFalsy();
    expect(withPoll.structuredContent?.poll).toMatchObject({ options: ['yes', 'no'] });
    // The post as it would be is checked: a network without polls is refused while the poll stays.
    const bluesky = await call(c, 'update_post', { id, platforms: ['bluesky'] });
    expect(bluesky.isError).toBe(true);
    expect(bluesky.structuredContent?.details).toMatchObject({ issues: [{ field: 'poll' }] });
    expect(bluesky.structuredContent?.fix).toEqual(expect.any(String));
    const removed = await call(c, 'update_post', { id, poll: null, platforms: ['bluesky'] });
    expect(removed.isError).toBeFalsy();
    expect(removed.structuredContent?.poll).toBeNull();
    expect(removed.structuredContent?.platforms).toEqual(['bluesky']);
    await c.close();
  });
});
