import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MAX_LIST_A, MAX_REPORTED_ISSUES } from '@sps/core';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';

// Unbounded lists and errors (issue #15): an account with many posts, and bodies of a megabyte of wrong
// types. No answer may hold more than its cap.

const mcpCall = (api: TTestApi, key: string, name: string, args: Record<string, unknown>) =>
  request(api.app)
    .post('/mcp')
    .set(bearer(key))
    .set('accept', 'application/json, text/event-stream')
    .send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });

describe('lists and validation answers are bounded', () => {
  let api: TTestApi;
  let key = '';
  let accountId = '';

  beforeAll(async () => {
    api = await startTestApi();
    ({ apiKey: key, accountId } = await api.account('pro'));
    const base = Date.now() - 1_000_000;
    // 150 posts, 120 of them in the interval queue, written straight to the table.
    await api.db.post.createMany({
      data: Array.from({ length: 150 }, (_, i) => ({
        accountId,
        content: `post ${i}`,
        platforms: ['twitter' as const],
        status: 'draft' as const,
        createdAt: new Date(base + i * 1000),
        ...(i < 120 ? { queueState: 'queued' as const, queuedAt: new Date(base + i * 1000) } : {}),
      })),
    });
  });
  afterAll(() => api.close());

  it(`Variant A GET /api/posts answers at most ${MAX_LIST_A} posts and says how to get the rest`, async () => {
    const first = await request(api.app).get('/api/posts').set('x-api-key', key);
    expect(first.status).toBe(200);
    expect(first.body.posts).toHaveLength(MAX_LIST_A);
    expect(first.body).toMatchObject({ success: true, total: 150, hasMore: true, nextOffset: MAX_LIST_A });
    expect(first.body.posts[0].content).toBe('post 149'); // newest first
    const rest = await request(api.app)
      .get(`/api/posts?offset=${first.body.nextOffset}`)
      .set('x-api-key', key);
    expect(rest.body.posts).toHaveLength(50);
    expect(rest.body).toMatchObject({ total: 150, hasMore: false });
    expect(rest.body.nextOffset).toBeUndefined();
    const queued = await request(api.app).get('/api/posts?status=queued&limit=30').set('x-api-key', key);
    expect(queued.body.posts).toHaveLength(30);
    expect(queued.body).toMatchObject({ total: 120, hasMore: true, nextOffset: 30 });
    const bad = await request(api.app).get('/api/posts?limit=101').set('x-api-key', key);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe(`limit: must be an integer from 1 to ${MAX_LIST_A}`);
  });

  it('MCP list_posts pages the interval queue too', async () => {
    const res = await mcpCall(api, key, 'list_posts', { queue_status: 'queued', limit: 100 });
    const result = res.body.result.structuredContent as { posts: unknown[]; total: number };
    expect(result.posts).toHaveLength(100);
    expect(result.total).toBe(120);
    const next = await mcpCall(api, key, 'list_posts', { queue_status: 'queued', limit: 100, offset: 100 });
    expect((next.body.result.structuredContent as { posts: unknown[] }).posts).toHaveLength(20);
  });

  // A megabyte of wrong types: every item of every list is an issue of its own.
  const wrongTypes = {
    content: 1,
    platforms: Array(200_000).fill(1),
    segments: Array.from({ length: 24 }, () => ({ content: 1, media_urls: Array(5000).fill(1) })),
  };

  it(`Variant B reports the first ${MAX_REPORTED_ISSUES} issues of a megabyte of wrong types and their count`, async () => {
    expect(JSON.stringify(wrongTypes).length).toBeGreaterThan(600_000);
    const res = await request(api.app).post('/v1/posts').set(bearer(key)).send(wrongTypes);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_error');
    expect(res.body.details.issues).toHaveLength(MAX_REPORTED_ISSUES);
    expect(res.body.details.issue_count).toBeGreaterThan(MAX_REPORTED_ISSUES);
    expect(res.body.details.field).toBe('content');
    expect(JSON.stringify(res.body).length).toBeLessThan(10_000);
  });

  it('Variant A and MCP do the same', async () => {
    const a = await request(api.app)
      .post('/api/posts')
      .set('x-api-key', key)
      .send({ ...wrongTypes, segments: wrongTypes.segments.map((s) => ({ ...s, mediaUrls: s.media_urls })) });
    expect(a.status).toBe(400);
    expect(a.body.details.issues.length).toBeLessThanOrEqual(MAX_REPORTED_ISSUES);
    expect(JSON.stringify(a.body).length).toBeLessThan(10_000);

    // Many fields wrong at once (each within its list bounds): more than 20 issues, 20 reported.
    const many = {
      content: 1,
      platforms: ['x'],
      segments: Array.from({ length: 24 }, () => ({ content: 1, media_urls: [1, 2, 3, 4] })),
    };
    const b = await request(api.app).post('/v1/posts').set(bearer(key)).send(many);
    expect(b.body.details.issues).toHaveLength(MAX_REPORTED_ISSUES);
    expect(b.body.details.issue_count).toBe(2 + 24 * 5);
    expect(b.body.error).toMatch(new RegExp(`^content: .* \\(and ${2 + 24 * 5 - 1} more problems\\)$`));

    const mcp = await mcpCall(api, key, 'create_post', { content: 'x', platforms: Array(50_000).fill(1) });
    expect(mcp.status).toBe(200);
    expect(mcp.body.result.isError).toBe(true);
    expect(JSON.stringify(mcp.body).length).toBeLessThan(20_000);
  });
});
