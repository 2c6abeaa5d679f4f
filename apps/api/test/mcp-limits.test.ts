import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';
import { mcpClients, type TToolResult } from './mcp-helpers.js';

// MCP calls under the plans and rate limits of REST: small Variant B tiers (free: 60 requests a minute and
// 2 publishes an hour; starter: 8 a minute) and a free twitter allowance of 1 a month, so limits trip fast.

const ACCEPT = 'application/json, text/event-stream';

describe('MCP plans and rate limits', () => {
  let api: TTestApi;
  let server: Server;
  let url: URL;
  const mcp = mcpClients(() => url);
  const { client, call } = mcp;
  const createDraft = async (key: string, platforms: string[], content = 'limited') => {
    const res = await request(api.app).post('/v1/posts').set(bearer(key)).send({ content, platforms });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  const statusOf = async (key: string, id: string) =>
    (await request(api.app).get(`/v1/posts/${id}`).set(bearer(key))).body.status as string;

  beforeAll(async () => {
    api = await startTestApi({
      env: { RATE_LIMIT_B_TIERS: 'free=60/2,starter=8/100', TWITTER_MONTHLY_ALLOWANCE: 'free=1' },
    });
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

  it('a publish tool call uses the hourly publish limit of POST /v1/posts/{id}/publish, not the per-minute one', async () => {
    const { apiKey, accountId } = await api.account('free');
    await api.connect(accountId, 'bluesky');
    const ids = [
      await createDraft(apiKey, ['bluesky']),
      await createDraft(apiKey, ['bluesky']),
      await createDraft(apiKey, ['bluesky']),
    ];
    const c = await client(apiKey);
    const before = Number(
      (await request(api.app).get('/v1/posts').set(bearer(apiKey))).headers['x-ratelimit-remaining'],
    );

    for (const id of ids.slice(0, 2)) {
      const ok = await call(c, 'publish_post', { id });
      expect(ok.isError).toBeFalsy();
      expect(ok.structuredContent?.status).toBe('publishing');
    }
    // Over the limit: a tool error (the call resolves), with the REST message, the numbers and a fix.
    const refused = await call(c, 'publish_post', { id: ids[2] });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toMatchObject({
      error: 'Publish limit exceeded: 2 publishes per hour for this API key',
      code: 'rate_limited',
      details: { limit: 2, remaining: 0 },
    });
    const details = (refused.structuredContent?.details ?? {}) as { retry_after?: number };
    expect(Number(details.retry_after)).toBeGreaterThan(60);
    expect(String(refused.structuredContent?.fix)).toContain('Wait');
    expect(refused.content[0]?.text).toContain('Fix:');
    // A refused publish changes nothing.
    expect(await statusOf(apiKey, ids[2] as string)).toBe('draft');

    // One counter for both doors: REST publish of the same key is refused too.
    const rest = await request(api.app).post(`/v1/posts/${ids[2]}/publish`).set(bearer(apiKey));
    expect(rest.status).toBe(429);
    expect(rest.body.error).toBe('Publish limit exceeded: 2 publishes per hour for this API key');

    // The three publish calls left the per-minute count alone: only the status GET and this GET used it.
    const after = await request(api.app).get('/v1/posts').set(bearer(apiKey));
    expect(Number(after.headers['x-ratelimit-remaining'])).toBe(before - 2);
  });

  it('counts each call of a JSON-RPC batch, so batching cannot dodge the publish limit', async () => {
    const { apiKey, accountId } = await api.account('free');
    await api.connect(accountId, 'bluesky');
    const ids = [
      await createDraft(apiKey, ['bluesky']),
      await createDraft(apiKey, ['bluesky']),
      await createDraft(apiKey, ['bluesky']),
    ];
    const batch = ids.map((id, i) => ({
      jsonrpc: '2.0',
      id: i + 1,
      method: 'tools/call',
      params: { name: 'publish_post', arguments: { id } },
    }));
    const res = await request(api.app).post('/mcp').set(bearer(apiKey)).set('Accept', ACCEPT).send(batch);
    expect(res.status).toBe(429);
    expect(res.body.code).toBe('rate_limited');
    // Refused before MCP ran any of them, and the two counted calls used the hour's publishes.
    for (const id of ids) expect(await statusOf(apiKey, id)).toBe('draft');
    expect((await request(api.app).post(`/v1/posts/${ids[0]}/publish`).set(bearer(apiKey))).status).toBe(429);
  });

  it('refuses publishing for an account without a plan, as a tool error with a fix', async () => {
    const { apiKey, accountId } = await api.account('none');
    await api.connect(accountId, 'bluesky');
    const c = await client(apiKey);
    const created = await call(c, 'create_post', { content: 'no plan yet', platforms: ['bluesky'] });
    const id = created.structuredContent?.id as string;
    for (const name of ['publish_post', 'retry_post']) {
      const refused = await call(c, name, { id });
      expect({ name, isError: refused.isError, code: refused.structuredContent?.code }).toEqual({
        name,
        isError: true,
        code: 'plan_required',
      });
      expect(String(refused.structuredContent?.fix)).toContain('plan');
    }
    expect(await statusOf(apiKey, id)).toBe('draft');
  });

  it("uses the plan's monthly twitter allowance like the REST publish", async () => {
    const { apiKey, accountId } = await api.account('free');
    await api.connect(accountId, 'twitter');
    const c = await client(apiKey);
    const first = await createDraft(apiKey, ['twitter'], 'first tweet');
    const second = await createDraft(apiKey, ['twitter'], 'second tweet');
    expect((await call(c, 'publish_post', { id: first })).isError).toBeFalsy();
    const refused = await call(c, 'publish_post', { id: second });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent?.code).toBe('quota_exceeded');
    expect(refused.structuredContent?.details).toMatchObject({ platform: 'twitter', allowance: 1, used: 1 });
    expect(String(refused.structuredContent?.fix)).toContain('upgrade');
    expect(await statusOf(apiKey, second)).toBe('draft');
  });

  it('answers a tool call over the per-minute limit as a tool error; other messages get the 429', async () => {
    const { apiKey } = await api.account('starter');
    const c = await client(apiKey);
    let refused: TToolResult | undefined;
    for (let i = 0; i < 10 && !refused; i += 1) {
      const result = await call(c, 'list_posts');
      if (result.isError) refused = result;
    }
    if (!refused) throw new Error('never limited');
    expect(refused.structuredContent).toMatchObject({
      error: 'Rate limit exceeded: 8 requests per minute for this API key',
      code: 'rate_limited',
    });
    expect(String(refused.structuredContent?.fix)).toContain('Wait');
    // tools/list is not a tool call: refused at the transport like any REST request.
    await expect(c.listTools()).rejects.toThrow();
  });

  it('counts malformed JSON bodies against the per-minute limit, then answers 400', async () => {
    const { apiKey } = await api.account('free');
    const remaining = async () =>
      Number((await request(api.app).get('/v1/posts').set(bearer(apiKey))).headers['x-ratelimit-remaining']);
    const before = await remaining();
    const bad = await request(api.app)
      .post('/mcp')
      .set(bearer(apiKey))
      .set('content-type', 'application/json')
      .set('accept', 'application/json, text/event-stream')
      .send('{"jsonrpc": "2.0", ');
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'malformed_json' });
    // The malformed request and the GET in between each took one.
    expect(await remaining()).toBe(before - 2);
  });

  it('gives arguments that fail the input schema, and unknown tools, a tool error with a fix', async () => {
    const { apiKey } = await api.account('pro');
    const c = await client(apiKey);
    const bad = await call(c, 'create_post', { content: 'x', platforms: 'twitter' });
    expect(bad.isError).toBe(true);
    expect(bad.structuredContent?.code).toBe('validation_error');
    expect(String(bad.structuredContent?.error)).toContain('platforms');
    expect(String(bad.structuredContent?.error)).not.toMatch(/^MCP error/);
    expect(bad.structuredContent?.fix).toEqual(expect.any(String));
    const unknown = await call(c, 'publish_everything');
    expect(unknown.isError).toBe(true);
    expect(unknown.structuredContent?.fix).toEqual(expect.any(String));
  });
});
