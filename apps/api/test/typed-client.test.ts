import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import createClient from 'openapi-fetch';
import { createAndReadPostA, postLifecycleB } from '../../../tools/openapi-client/src/examples.js';
import { createSpsClient } from '../../../tools/openapi-client/src/index.js';
import type { paths } from '../../../tools/openapi-client/src/schema.js';
import { startTestApi, type TTestApi } from './harness.js';

// End to end through the client generated from GET /openapi.json (tools/openapi-client), over real HTTP.
// The typed calls live in tools/openapi-client/src/examples.ts, which `npx tsc -b` type-checks.

describe('typed client generated from the OpenAPI document', () => {
  let api: TTestApi;
  let server: Server;
  let baseUrl: string;
  let keyA: string;
  let keyB: string;

  beforeAll(async () => {
    api = await startTestApi();
    server = await new Promise((resolve) => {
      const s = api.app.listen(0, '127.0.0.1', () => resolve(s));
    });
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    ({ apiKey: keyA } = await api.account('pro'));
    ({ apiKey: keyB } = await api.account('pro'));
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await api.close();
  });

  it('Variant B: creates, reads, lists and deletes a post', async () => {
    const client = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${keyB}` } });
    const flow = await postLifecycleB(client, {
      content: 'Typed hello',
      platforms: ['bluesky', 'mastodon'],
      segments: [{ content: 'and a reply' }],
    });
    expect(flow.created).toMatchObject({
      content: 'Typed hello',
      status: 'draft',
      platforms: ['bluesky', 'mastodon'],
    });
    expect(flow.read).toEqual(flow.created);
    expect(flow.listed.posts.map((p) => p.id)).toContain(flow.created.id);
    expect(flow.listed.total).toBeGreaterThanOrEqual(1);
    expect(flow.deleteStatus).toBe(204);
    expect(flow.afterDelete).toMatchObject({ code: 'not_found' });

    const listed = await client.GET('/v1/posts', { params: { query: { status: 'draft' } } });
    expect(listed.data?.posts).toEqual([]);
    expect(listed.response.headers.get('x-ratelimit-limit')).toMatch(/^\d+$/);
  });

  it('Variant B: errors arrive typed in the {error, code, details} shape', async () => {
    const client = createSpsClient(baseUrl, keyB);
    const bad = await client.POST('/v1/posts', { body: { content: 'x', platforms: [] } });
    expect(bad.response.status).toBe(400);
    expect(bad.error).toMatchObject({ code: 'validation_error', details: { field: 'platforms' } });
    const anonymous = createClient<paths>({ baseUrl });
    const unauthorized = await anonymous.GET('/v1/accounts');
    expect(unauthorized.response.status).toBe(401);
    expect(unauthorized.error).toMatchObject({ code: 'unauthorized' });
  });

  it('Variant A: creates and reads a post (Bearer), and lists accounts with x-api-key', async () => {
    const { created, read } = await createAndReadPostA(createSpsClient(baseUrl, keyA), {
      content: 'Typed hello from A',
      platforms: ['twitter'],
      scheduledFor: new Date(Date.now() + 86_400_000).toISOString(),
    });
    expect(created).toMatchObject({ content: 'Typed hello from A', published: false, queueStatus: null });
    expect(created.scheduledFor).not.toBeNull();
    expect(read).toEqual(created);

    const withHeader = createClient<paths>({ baseUrl, headers: { 'x-api-key': keyA } });
    const accounts = await withHeader.GET('/api/accounts');
    expect(accounts.data).toEqual({ accounts: [] });
  });

  it('sends an Idempotency-Key on creates and, when the answer is lost, retries with it: one post', async () => {
    const { apiKey, accountId } = await api.account('pro');
    const sent: { key: string | null; path: string }[] = [];
    let lost = 0;
    // The first answer to a create is lost on the way back (the server made the post).
    const losingFetch = async (request: Request) => {
      sent.push({ key: request.headers.get('idempotency-key'), path: new URL(request.url).pathname });
      const response = await fetch(request);
      if (request.method === 'POST' && lost === 0) {
        lost += 1;
        await response.body?.cancel();
        throw new TypeError('fetch failed: socket hang up');
      }
      return response;
    };
    const client = createSpsClient(baseUrl, apiKey, { fetch: losingFetch, idempotency: { backoffMs: 10 } });
    const created = await client.POST('/v1/posts', {
      body: { content: 'once only', platforms: ['twitter'] },
    });
    expect(created.response.status).toBe(201);
    expect(created.response.headers.get('idempotent-replayed')).toBe('true');
    expect(sent).toHaveLength(2);
    expect(sent[0]?.key).toMatch(/^[0-9a-f-]{36}$/);
    expect(sent[1]?.key).toBe(sent[0]?.key);
    expect(await api.db.post.count({ where: { accountId } })).toBe(1);
    // Reads carry no key; another create gets a new one.
    await client.GET('/v1/posts', {});
    await client.POST('/v1/posts', { body: { content: 'second', platforms: ['twitter'] } });
    expect(sent[2]?.key).toBeNull();
    expect(sent[3]?.key).not.toBe(sent[0]?.key);
    expect(await api.db.post.count({ where: { accountId } })).toBe(2);
  });
});
