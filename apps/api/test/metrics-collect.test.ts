import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { TPlatform } from '@sps/core';
import { simFiguresOf, type TSimFigures } from '@sps/network-sim';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';
import { createB, pollUntil, settleB, sleep } from './pipeline-helpers.js';

// Collection end to end: posts published through the simulator, figures set there, read by the metrics
// jobs (scheduled at METRICS_COLLECT_AFTER by the reconciler, and by refresh), read back through the API
// and MCP; the simulator counts the read calls, so batching per account is checked too.

const NETWORKS: TPlatform[] = ['twitter', 'bluesky', 'mastodon'];
/** METRICS_COLLECT_AFTER of these tests: long enough that a loaded machine publishes and checks before it. */
const FIRST_MS = 3000;
const SECOND_MS = 6000;
type TMetricsBody = { platforms: Record<string, Record<string, unknown>> };

describe('metrics collection through the simulator', () => {
  let api: TTestApi;
  let server: Server;

  beforeAll(async () => {
    // The reconciler runs when the test says (reconcileNow), so what each run finds due is known.
    api = await startTestApi({
      publisher: true,
      metricsCollectAfterMs: [FIRST_MS, SECOND_MS],
      // A read that times out is retried (and counted twice): on a loaded machine 2 s is too short.
      networkTimeoutMs: 10_000,
      reconcileEveryMs: 600_000,
    });
    server = await new Promise((resolve) => {
      const s = api.app.listen(0, '127.0.0.1', () => resolve(s));
    });
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    await api.close();
  });

  const sim = () => {
    if (!api.sim) throw new Error('no simulator');
    return api.sim.sim;
  };
  const setFigures = (platform: TPlatform, remoteId: string, figures: TSimFigures) =>
    simFiguresOf(sim()).set(platform, remoteId, figures);
  const readCalls = (platform: TPlatform) =>
    sim().requests.filter(
      (r) =>
        r.platform === platform &&
        r.method === 'GET' &&
        /\/2\/tweets\?|app\.bsky\.feed\.getPosts|\/api\/v1\/statuses(\?|\/\d)/.test(r.path),
    ).length;
  const metricsOf = async (key: string, id: string) =>
    (await request(api.app).get(`/v1/posts/${id}/metrics`).set(bearer(key))).body as TMetricsBody;
  const remoteIds = async (key: string, id: string) => {
    const post = await settleB(api, key, id);
    expect(post.status).toBe('published');
    return Object.fromEntries(
      NETWORKS.map((p) => {
        const result = post.platform_results?.[p];
        if (!result?.success) throw new Error(`${p} not published`);
        return [p, result.post_id];
      }),
    ) as Record<TPlatform, string>;
  };
  async function publish(key: string, content: string) {
    const post = await createB(api, key, { content, platforms: NETWORKS });
    expect((await request(api.app).post(`/v1/posts/${post.id}/publish`).set(bearer(key))).status).toBe(200);
    const remote = await remoteIds(key, post.id);
    // Each network's collection times count from its own publishing time: wait for the latest one.
    const targets = await api.db.postTarget.findMany({
      where: { postId: post.id },
      select: { publishedAt: true },
    });
    const publishedAt = Math.max(...targets.map((t) => t.publishedAt?.getTime() ?? Date.now()));
    return { id: post.id, remote, publishedAt };
  }
  /** Sleeps until `ms` after `from` (a publishing time), so a collection time has passed. */
  const sleepPast = (from: number, ms: number) => sleep(Math.max(0, from + ms + 100 - Date.now()));
  /** Runs the reconciler, then waits until the metrics queue has nothing left to do. */
  async function collectDue() {
    await api.publisher?.reconcileNow();
    await pollUntil(
      async () => api.queues.metrics.getJobCounts('waiting', 'active', 'delayed', 'prioritized'),
      (c) => Object.values(c).every((n) => n === 0),
      10_000,
    );
  }

  it('collects at each METRICS_COLLECT_AFTER time, then on refresh; API and MCP show the latest figures', async () => {
    const { apiKey, accountId } = await api.account('pro');
    for (const p of NETWORKS) await api.connect(accountId, p);
    const { id, remote, publishedAt } = await publish(apiKey, 'how did it do');
    setFigures('twitter', remote.twitter, {
      likes: 4,
      reposts: 2,
      replies: 1,
      quotes: 1,
      bookmarks: 3,
      impressions: 250,
      clicks: 7,
    });
    setFigures('bluesky', remote.bluesky, { likes: 5, reposts: 1, replies: 2, quotes: 0 });
    setFigures('mastodon', remote.mastodon, { likes: 6, reposts: 3, replies: 0, quotes: 1 });

    // Nothing is due before the first collection time.
    await collectDue();
    expect((await metricsOf(apiKey, id)).platforms.twitter?.collected_at).toBeNull();

    await sleepPast(publishedAt, FIRST_MS);
    await collectDue();
    let body = await metricsOf(apiKey, id);
    expect(body.platforms.twitter).toMatchObject({
      likes: 4,
      reposts: 2,
      replies: 1,
      quotes: 1,
      bookmarks: 3,
      impressions: 250,
      clicks: 7,
      views: null,
    });
    expect(body.platforms.bluesky).toMatchObject({
      likes: 5,
      reposts: 1,
      replies: 2,
      quotes: 0,
      impressions: null,
      clicks: null,
    });
    expect(body.platforms.mastodon).toMatchObject({
      likes: 6,
      reposts: 3,
      replies: 0,
      quotes: 1,
      impressions: null,
    });
    expect(body.platforms.twitter?.collected_at).toEqual(expect.any(String));

    // A second run before the next collection time reads nothing more.
    const before = readCalls('twitter');
    await collectDue();
    expect(readCalls('twitter')).toBe(before);

    setFigures('twitter', remote.twitter, { likes: 40 });
    await sleepPast(publishedAt, SECOND_MS);
    await collectDue();
    body = await metricsOf(apiKey, id);
    expect(body.platforms.twitter).toMatchObject({ likes: 40, reposts: 2 });
    expect(readCalls('twitter')).toBe(before + 1);
    // Past the last collection time nothing is due any more.
    await collectDue();
    expect(readCalls('twitter')).toBe(before + 1);

    // Refresh reads now.
    setFigures('mastodon', remote.mastodon, { likes: 60 });
    expect((await request(api.app).post(`/v1/posts/${id}/metrics/refresh`).set(bearer(apiKey))).status).toBe(
      202,
    );
    body = await pollUntil(
      () => metricsOf(apiKey, id),
      (b) => b.platforms.mastodon?.likes === 60,
    );
    expect(body.platforms.mastodon?.likes).toBe(60);
    const snapshots = await api.db.metricSnapshot.count({ where: { postId: id, platform: 'mastodon' } });
    expect(snapshots).toBe(3);

    // MCP reads the same.
    const c = new Client({ name: 'metrics-collect-test', version: '1.0.0' });
    const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
    await c.connect(
      new StreamableHTTPClientTransport(url, {
        requestInit: { headers: { Authorization: `Bearer ${apiKey}` } },
      }),
    );
    const mcp = (await c.callTool({ name: 'get_post_metrics', arguments: { id } })) as {
      structuredContent?: TMetricsBody;
    };
    expect(mcp.structuredContent?.platforms.mastodon?.likes).toBe(60);
    expect(mcp.structuredContent?.platforms.twitter?.likes).toBe(40);
    const analytics = (await c.callTool({ name: 'get_analytics', arguments: {} })) as {
      structuredContent?: { totals: Record<string, number> };
    };
    expect(analytics.structuredContent?.totals).toMatchObject({ posts: 1, likes: 40 + 5 + 60 });
    await c.close();
  });

  it('reads many posts of one account in the network’s batches (X 100, Bluesky 25, Mastodon 20)', async () => {
    const { apiKey, accountId } = await api.account('pro');
    for (const p of NETWORKS) await api.connect(accountId, p, `batch-${p}`);
    const posts: { id: string; remote: Record<TPlatform, string>; publishedAt: number }[] = [];
    for (let i = 0; i < 30; i += 1) posts.push(await publish(apiKey, `batched post ${i}`));
    for (const [i, p] of posts.entries()) setFigures('twitter', p.remote.twitter, { likes: i });
    const calls = Object.fromEntries(NETWORKS.map((p) => [p, readCalls(p)]));
    await sleepPast(posts.at(-1)?.publishedAt ?? Date.now(), FIRST_MS);
    await collectDue();
    expect(readCalls('twitter') - (calls.twitter ?? 0)).toBe(1);
    expect(readCalls('bluesky') - (calls.bluesky ?? 0)).toBe(2);
    expect(readCalls('mastodon') - (calls.mastodon ?? 0)).toBe(2);
    for (const [i, p] of posts.entries()) {
      expect((await metricsOf(apiKey, p.id)).platforms.twitter?.likes).toBe(i);
    }
  });

  it('shows a post the network no longer has, a missing permission and a rate limit as the network answered', async () => {
    const { apiKey, accountId } = await api.account('pro');
    for (const p of NETWORKS) await api.connect(accountId, p, `refusal-${p}`);
    const gone = await publish(apiKey, 'soon deleted');
    const kept = await publish(apiKey, 'kept');
    const post = sim().getPost('twitter', gone.remote.twitter);
    if (post) post.deleted = true;
    // X rate-limits the next read: the job waits the announced time and reads again, losing nothing.
    const xCalls = sim().requests.length;
    sim().addFault({
      platform: 'twitter',
      kind: 'rate_limited',
      remaining: 1,
      retryAfterSeconds: 1,
      pathIncludes: kept.remote.twitter,
    });
    await sleepPast(kept.publishedAt, FIRST_MS);
    await collectDue();
    const goneBody = await pollUntil(
      () => metricsOf(apiKey, gone.id),
      (b) => typeof b.platforms.twitter?.error === 'string',
    );
    expect(goneBody.platforms.twitter?.error).toMatch(/no longer on X/);
    expect((await metricsOf(apiKey, kept.id)).platforms.twitter).toMatchObject({ likes: 0 });
    // One read refused with 429, one read of both posts after the announced wait (other tests' accounts
    // may be read in the same runs: only calls naming this test's posts count).
    const ours = sim()
      .requests.slice(xCalls)
      .filter(
        (r) =>
          r.platform === 'twitter' && r.path.includes('/2/tweets?') && r.path.includes(kept.remote.twitter),
      );
    expect(ours).toHaveLength(2);

    // A Mastodon token without read:statuses: the refusal names the permission and says to reconnect.
    const noRead = await api.account('pro');
    await api.connect(noRead.accountId, 'mastodon', 'noread-user');
    const created = await createB(api, noRead.apiKey, { content: 'no read scope', platforms: ['mastodon'] });
    await request(api.app).post(`/v1/posts/${created.id}/publish`).set(bearer(noRead.apiKey));
    expect((await settleB(api, noRead.apiKey, created.id)).status).toBe('published');
    await request(api.app).post(`/v1/posts/${created.id}/metrics/refresh`).set(bearer(noRead.apiKey));
    const refused = await pollUntil(
      () => metricsOf(noRead.apiKey, created.id),
      (b) => typeof b.platforms.mastodon?.error === 'string',
    );
    expect(refused.platforms.mastodon?.error).toMatch(/read:statuses.*reconnect/i);
  });

  it('reads have a lane of their own: publishing goes on while every metrics slot waits on a slow network', async () => {
    const { apiKey, accountId } = await api.account('pro');
    for (const p of NETWORKS) await api.connect(accountId, p, `lane-${p}`);
    const published = [];
    for (let i = 0; i < 4; i += 1) published.push(await publish(apiKey, `lane ${i}`));
    // X answers reads only after 8 s; four refreshes take the four metrics slots (METRICS_CONCURRENCY 4).
    sim().addFault({
      platform: 'twitter',
      kind: 'slow',
      remaining: -1,
      delayMs: 8000,
      pathIncludes: '/2/tweets?',
    });
    try {
      for (const p of published) {
        expect(
          (await request(api.app).post(`/v1/posts/${p.id}/metrics/refresh`).set(bearer(apiKey))).status,
        ).toBe(202);
      }
      await pollUntil(
        () => api.queues.metrics.getJobCounts('active'),
        (c) => c.active === 4,
      );
      const next = await publish(apiKey, 'published while reads wait');
      expect(next.remote.twitter).toEqual(expect.any(String));
      // The reads were still waiting when the post was out.
      expect((await api.queues.metrics.getJobCounts('active')).active).toBeGreaterThan(0);
    } finally {
      sim().clearFaults();
    }
    await pollUntil(
      () => api.queues.metrics.getJobCounts('waiting', 'active'),
      (c) => c.waiting === 0 && c.active === 0,
      20_000,
    );
  });
});
