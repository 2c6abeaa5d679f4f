import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MAX_LIST_A, MAX_REPORTED_ISSUES } from '@sps/core';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';

// Unbounded lists and errors (issue #15): an account with many posts, and bodies of a megabyte of wrong
// types. No answer may hold more than its cap.

const TOTAL = 1250;

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

  /** `take` of every post list query the API ran (Variant A reads its "all posts" in pages). */
  const takes: unknown[] = [];

  beforeAll(async () => {
    api = await startTestApi({
      wrapApiDb: (db) =>
        new Proxy(db, {
          get(target, prop, receiver) {
            const value = Reflect.get(target, prop, receiver);
            if (prop !== 'post') return value;
            return new Proxy(value, {
              get(model, name, r) {
                const method = Reflect.get(model, name, r);
                if (name !== 'findMany') return method;
                return (args: { take?: unknown }) => {
                  takes.push(args?.take);
                  return method.call(model, args);
                };
              },
            });
          },
        }),
    });
    ({ apiKey: key, accountId } = await api.account('pro'));
    const base = Date.now() - 10_000_000;
    // 1,250 posts, 120 of them in the interval queue, written straight to the table.
    await api.db.post.createMany({
      data: Array.from({ length: TOTAL }, (_, i) => ({
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

  it(`Variant A GET /api/posts answers all posts up to ${MAX_LIST_A}, read in pages, and says how to get the rest`, async () => {
    takes.length = 0;
    const first = await request(api.app).get('/api/posts').set('x-api-key', key);
    expect(first.status).toBe(200);
    expect(first.headers['content-type']).toMatch(/^application\/json/);
    expect(first.body.posts).toHaveLength(MAX_LIST_A);
    expect(first.body).toMatchObject({ success: true, total: TOTAL, hasMore: true, nextOffset: MAX_LIST_A });
    // Newest first, each once, in order across the internal pages.
    const contents = (first.body.posts as { content: string }[]).map((p) => p.content);
    expect(contents).toEqual(Array.from({ length: MAX_LIST_A }, (_, i) => `post ${TOTAL - 1 - i}`));
    // The database was read 200 rows at a time, never all at once.
    expect(takes).toEqual([200, 200, 200, 200, 200]);
    const rest = await request(api.app)
      .get(`/api/posts?offset=${first.body.nextOffset}`)
      .set('x-api-key', key);
    expect(rest.body.posts).toHaveLength(TOTAL - MAX_LIST_A);
    expect(rest.body.posts[0].content).toBe(`post ${TOTAL - 1 - MAX_LIST_A}`);
    expect(rest.body).toMatchObject({ total: TOTAL, hasMore: false });
    expect(rest.body.nextOffset).toBeUndefined();
    const queued = await request(api.app).get('/api/posts?status=queued&limit=30').set('x-api-key', key);
    expect(queued.body.posts).toHaveLength(30);
    expect(queued.body).toMatchObject({ total: 120, hasMore: true, nextOffset: 30 });
    const allQueued = await request(api.app).get('/api/posts?status=queued').set('x-api-key', key);
    expect(allQueued.body.posts).toHaveLength(120);
    expect(allQueued.body).toMatchObject({ total: 120, hasMore: false });
    const bad = await request(api.app)
      .get(`/api/posts?limit=${MAX_LIST_A + 1}`)
      .set('x-api-key', key);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe(`limit: must be an integer from 1 to ${MAX_LIST_A}`);
  });

  it('an account with no posts gets an empty list', async () => {
    const empty = await api.account('pro');
    const res = await request(api.app).get('/api/posts').set('x-api-key', empty.apiKey);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, posts: [], total: 0, hasMore: false });
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
