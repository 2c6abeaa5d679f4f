import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { emptyFigures } from '@sps/core';
import { createMetricsRepository } from '@sps/db';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';
import { createB, pollUntil, settleB } from './pipeline-helpers.js';

// The engagement API (contract, "Engagement") over snapshots written as the collector writes them:
// shapes of both variants and MCP, tenancy, the analytics range rules and the refresh limit.

type TToolResult = { isError?: boolean; structuredContent?: Record<string, unknown> };

describe('engagement API', () => {
  let api: TTestApi;
  let server: Server;
  let key: string;
  let accountId: string;
  let postId: string;

  beforeAll(async () => {
    api = await startTestApi({ publisher: true, env: { METRICS_REFRESH_PER_HOUR: '3' } });
    server = await new Promise((resolve) => {
      const s = api.app.listen(0, '127.0.0.1', () => resolve(s));
    });
    ({ apiKey: key, accountId } = await api.account('pro'));
    await api.connect(accountId, 'twitter');
    await api.connect(accountId, 'mastodon');
    await api.connect(accountId, 'telegram');
    const post = await createB(api, key, {
      content: 'figures',
      platforms: ['twitter', 'mastodon', 'telegram'],
    });
    postId = post.id;
    expect((await request(api.app).post(`/v1/posts/${postId}/publish`).set(bearer(key))).status).toBe(200);
    expect((await settleB(api, key, postId)).status).toBe('published');
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    await api.close();
  });

  const repo = () => createMetricsRepository(api.db);

  it('shows each published network: null figures before any collection, Telegram as unreadable', async () => {
    const res = await request(api.app).get(`/v1/posts/${postId}/metrics`).set(bearer(key));
    expect(res.status).toBe(200);
    expect(res.body.post_id).toBe(postId);
    expect(res.body.platforms.twitter).toEqual({ collected_at: null, ...emptyFigures() });
    expect(res.body.platforms.telegram.error).toMatch(/Telegram/);
    expect(Object.keys(res.body.platforms).sort()).toEqual(['mastodon', 'telegram', 'twitter']);
  });

  it('answers the latest snapshot per network, an error where the network could not be read', async () => {
    const figures = { ...emptyFigures(), likes: 3, reposts: 1, replies: 2, impressions: 100 };
    await repo().record([
      {
        accountId,
        postId,
        platform: 'twitter',
        figures,
        error: null,
        collectedAt: new Date(Date.now() - 60_000),
      },
      {
        accountId,
        postId,
        platform: 'twitter',
        figures: { ...figures, likes: 5 },
        error: null,
        collectedAt: new Date(),
      },
      { accountId, postId, platform: 'mastodon', figures: null, error: 'Reconnect the account.' },
    ]);
    const b = await request(api.app).get(`/v1/posts/${postId}/metrics`).set(bearer(key));
    expect(b.body.platforms.twitter).toEqual({
      collected_at: expect.any(String),
      ...figures,
      likes: 5,
    });
    expect(b.body.platforms.mastodon).toEqual({ error: 'Reconnect the account.' });
    const a = await request(api.app).get(`/api/posts/${postId}/metrics`).set('x-api-key', key);
    expect(a.status).toBe(200);
    expect(a.body).toMatchObject({ success: true, postId, platforms: { twitter: { likes: 5 } } });
    expect(a.body.platforms.twitter.collectedAt).toEqual(expect.any(String));
  });

  it('never shows another account’s post (404 in both variants)', async () => {
    const other = await api.account('pro');
    expect((await request(api.app).get(`/v1/posts/${postId}/metrics`).set(bearer(other.apiKey))).status).toBe(
      404,
    );
    expect(
      (await request(api.app).get(`/api/posts/${postId}/metrics`).set('x-api-key', other.apiKey)).status,
    ).toBe(404);
    expect(
      (await request(api.app).post(`/v1/posts/${postId}/metrics/refresh`).set(bearer(other.apiKey))).status,
    ).toBe(404);
    // Ids that are no post id at all: the same 404, never a database error.
    for (const bad of ['not-a-uuid', '00000000-0000-0000-0000-00000000000g', "1'--"]) {
      const id = encodeURIComponent(bad);
      expect((await request(api.app).get(`/v1/posts/${id}/metrics`).set(bearer(key))).status).toBe(404);
      expect((await request(api.app).post(`/v1/posts/${id}/metrics/refresh`).set(bearer(key))).status).toBe(
        404,
      );
      expect((await request(api.app).get(`/api/posts/${id}/metrics`).set('x-api-key', key)).status).toBe(404);
    }
    const analytics = await request(api.app).get('/v1/analytics').set(bearer(other.apiKey));
    expect(analytics.body.totals.posts).toBe(0);
  });

  it('sums the latest figures per day, per network and in total', async () => {
    const today = new Date().toISOString().slice(0, 10);
    const res = await request(api.app).get(`/v1/analytics?from=${today}&to=${today}`).set(bearer(key));
    expect(res.status).toBe(200);
    expect(res.body.totals).toMatchObject({ posts: 1, likes: 5, impressions: 100 });
    expect(res.body.platforms.twitter).toMatchObject({ posts: 1, likes: 5 });
    expect(res.body.platforms.mastodon).toMatchObject({ posts: 1, likes: null });
    expect(res.body.days).toEqual([expect.objectContaining({ date: today, posts: 1, likes: 5 })]);
    const onlyMastodon = await request(api.app)
      .get(`/v1/analytics?from=${today}&to=${today}&platform=mastodon`)
      .set(bearer(key));
    expect(onlyMastodon.body.totals).toMatchObject({ posts: 1, likes: null });
    const month = await request(api.app).get('/v1/analytics').set(bearer(key));
    expect(month.body.days).toHaveLength(30);
    expect(month.body.days.at(-1)).toMatchObject({ date: today, posts: 1 });
    const a = await request(api.app).get('/api/analytics').set('x-api-key', key);
    expect(a.body).toMatchObject({ success: true, totals: { posts: 1, likes: 5 } });
  });

  it('refuses a bad range with 400 naming the field', async () => {
    const cases: [string, string][] = [
      ['from=2026-13-01', 'from'],
      ['from=2026-02-30', 'from'],
      ['to=yesterday', 'to'],
      ['to=2026-02-30T10:00:00Z', 'to'],
      ['from=2026-01-01T10:00:00', 'from'],
      ['from=2026-05-02&to=2026-05-01', 'from'],
      ['from=2024-01-01&to=2026-01-01', 'to'],
      ['platform=myspace', 'platform'],
      ['from=2026-01-01&from=2026-01-02', 'from'],
      ['since=2026-01-01', 'since'],
    ];
    for (const [query, field] of cases) {
      const res = await request(api.app).get(`/v1/analytics?${query}`).set(bearer(key));
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('validation_error');
      expect(JSON.stringify(res.body.details)).toContain(field);
      const a = await request(api.app).get(`/api/analytics?${query}`).set('x-api-key', key);
      expect(a.status).toBe(400);
      expect(a.body.error).toContain(field);
    }
    // A date-time counts as the UTC day it falls on.
    const dateTimes = await request(api.app)
      .get('/v1/analytics')
      .query({ from: '2025-03-01T23:30:00-02:00', to: '2025-03-03T10:00:00Z' })
      .set(bearer(key));
    expect(dateTimes.status).toBe(200);
    expect(dateTimes.body).toMatchObject({ from: '2025-03-02', to: '2025-03-03' });
    expect(dateTimes.body.days).toHaveLength(2);
    const year = await request(api.app).get('/v1/analytics?from=2025-01-01&to=2025-12-31').set(bearer(key));
    expect(year.status).toBe(200);
    expect(year.body.days).toHaveLength(365);
  });

  it('refresh answers 202 and queues a job; 409 for an unpublished post; 429 past the per-account limit', async () => {
    const draft = await createB(api, key, { content: 'draft', platforms: ['twitter'] });
    const refused = await request(api.app).post(`/v1/posts/${draft.id}/metrics/refresh`).set(bearer(key));
    expect(refused.status).toBe(409);
    const refusedA = await request(api.app)
      .post(`/api/posts/${draft.id}/metrics/refresh`)
      .set('x-api-key', key);
    expect(refusedA.status).toBe(400);
    expect(refusedA.body.error).toMatch(/not published/);
    for (let i = 0; i < 3; i += 1) {
      const res = await request(api.app).post(`/v1/posts/${postId}/metrics/refresh`).set(bearer(key));
      expect(res.status).toBe(202);
      expect(res.body).toEqual({ post_id: postId, status: 'collecting' });
    }
    const limited = await request(api.app).post(`/v1/posts/${postId}/metrics/refresh`).set(bearer(key));
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe('rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    const jobs = await api.queues.metrics.getJobs(['waiting', 'active', 'completed', 'failed', 'delayed']);
    expect(
      jobs.filter((j) => j.name === 'metrics-refresh' && j.data.postId === postId).length,
    ).toBeGreaterThanOrEqual(1);
  });

  it('MCP get_post_metrics and get_analytics answer the same figures', async () => {
    const c = new Client({ name: 'metrics-test', version: '1.0.0' });
    const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
    await c.connect(
      new StreamableHTTPClientTransport(url, {
        requestInit: { headers: { Authorization: `Bearer ${key}` } },
      }),
    );
    const names = (await c.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['get_post_metrics', 'get_analytics']));
    // The refresh jobs of the test above write newer snapshots: once they are done, MCP answers as REST.
    await pollUntil(
      () => api.queues.metrics.getJobCounts('waiting', 'active', 'delayed', 'prioritized'),
      (counts) => Object.values(counts).every((n) => n === 0),
    );
    const rest = await request(api.app).get(`/v1/posts/${postId}/metrics`).set(bearer(key));
    const metrics = (await c.callTool({
      name: 'get_post_metrics',
      arguments: { id: postId },
    })) as TToolResult;
    expect(metrics.isError).toBeFalsy();
    expect(metrics.structuredContent).toEqual(rest.body);
    const restAnalytics = await request(api.app).get('/v1/analytics').set(bearer(key));
    const analytics = (await c.callTool({ name: 'get_analytics', arguments: {} })) as TToolResult;
    expect(analytics.structuredContent).toEqual(restAnalytics.body);
    expect(restAnalytics.body.totals.posts).toBe(1);
    const bad = (await c.callTool({
      name: 'get_analytics',
      arguments: { from: '2026-02-31' },
    })) as TToolResult;
    expect(bad.isError).toBe(true);
    expect(JSON.stringify(bad.structuredContent)).toContain('from');
    await c.close();
  });

  it('describes every engagement route in the OpenAPI document', async () => {
    const doc = (await request(api.app).get('/openapi.json')).body as { paths: Record<string, unknown> };
    for (const path of [
      '/v1/posts/{id}/metrics',
      '/v1/posts/{id}/metrics/refresh',
      '/v1/analytics',
      '/api/posts/{id}/metrics',
      '/api/posts/{id}/metrics/refresh',
      '/api/analytics',
    ]) {
      expect(doc.paths[path]).toBeDefined();
    }
  });
});
