import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { simFiguresOf } from '@sps/network-sim';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';
import { createB, pollUntil, settleB } from './pipeline-helpers.js';

// Issue 25: reads have their own budget. With Discord's read budget at one call per 3 s window (per
// account), four refreshes (one read call each) are spread over at least four windows: the jobs past the
// budget wait as delayed jobs (no worker slot, no failed attempt), and a publish meanwhile is not held up.

const WINDOW_MS = 3000;
const COLLECT_MS = 2000;
type TMetricsBody = { platforms: Record<string, Record<string, unknown>> };

describe('the metrics read budget', () => {
  let api: TTestApi;

  beforeAll(async () => {
    api = await startTestApi({
      publisher: true,
      networkTimeoutMs: 10_000,
      metricsReadBudget: `discord=1/${WINDOW_MS}ms:account`,
      // Collections run when the test says (reconcileNow), COLLECT_MS after publishing.
      metricsCollectAfterMs: [COLLECT_MS],
      reconcileEveryMs: 600_000,
    });
  });
  afterAll(async () => {
    await api.close();
  });

  const reads = () =>
    (api.sim?.sim.requests ?? []).filter(
      (r) =>
        r.platform === 'discord' && r.method === 'GET' && /\/channels\/[^/]+\/messages\/\d+/.test(r.path),
    );

  /** The reads of these Discord messages, with the simulator's arrival time. */
  const readsOf = (remoteIds: string[]) =>
    reads().filter((r) => remoteIds.some((id) => r.path.endsWith(`/${id}`)));
  const perWindow = (at: string[]) => {
    const windows = new Map<number, number>();
    for (const a of at) {
      const w = Math.floor(Date.parse(a) / WINDOW_MS);
      windows.set(w, (windows.get(w) ?? 0) + 1);
    }
    return windows;
  };

  async function published(key: string, content: string) {
    const post = await createB(api, key, { content, platforms: ['discord'] });
    expect((await request(api.app).post(`/v1/posts/${post.id}/publish`).set(bearer(key))).status).toBe(200);
    const done = await settleB(api, key, post.id, 20_000);
    expect(done.status).toBe('published');
    const result = done.platform_results?.discord;
    if (!result?.success) throw new Error('not published');
    return { id: post.id, remoteId: result.post_id };
  }

  it('spreads reads past the budget over windows as delayed jobs; a publish meanwhile is not delayed', async () => {
    const { apiKey, accountId } = await api.account('pro');
    await api.connect(accountId, 'discord', 'budget-bot');
    const posts = [];
    for (let i = 0; i < 4; i += 1) posts.push(await published(apiKey, `budget ${i}`));
    for (const [i, p] of posts.entries()) {
      if (api.sim) simFiguresOf(api.sim.sim).set('discord', p.remoteId, { likes: i + 1 });
    }
    const before = reads().length;
    for (const p of posts) {
      expect(
        (await request(api.app).post(`/v1/posts/${p.id}/metrics/refresh`).set(bearer(apiKey))).status,
      ).toBe(202);
    }
    // The budget lets one through per window: the others wait delayed, holding no worker slot.
    await pollUntil(
      () => api.queues.metrics.getJobCounts('delayed', 'active'),
      (c) => c.delayed > 0,
      10_000,
    );
    // Publishing draws nothing from the read budget: a post published now goes out while reads wait.
    const during = await published(apiKey, 'published while reads wait');
    expect(during.remoteId).toEqual(expect.any(String));

    for (const [i, p] of posts.entries()) {
      const body = await pollUntil(
        async () =>
          (await request(api.app).get(`/v1/posts/${p.id}/metrics`).set(bearer(apiKey))).body as TMetricsBody,
        (b) => typeof b.platforms.discord?.likes === 'number',
        30_000,
      );
      expect(body.platforms.discord?.likes).toBe(i + 1);
    }
    const ours = reads().slice(before);
    expect(ours).toHaveLength(4);
    // The publish reached Discord while reads still waited for their windows (the simulator's order, not a
    // count of delayed jobs taken after the publish settled, which a loaded machine can outlast).
    const requests = api.sim?.sim.requests ?? [];
    const firstRead = requests.indexOf(ours[0] as (typeof requests)[number]);
    const sent = requests.findIndex(
      (r, i) =>
        i > firstRead &&
        r.platform === 'discord' &&
        r.method === 'POST' &&
        /\/channels\/[^/]+\/messages$/.test(r.path),
    );
    expect(sent).toBeGreaterThan(firstRead);
    expect(ours.filter((r) => requests.indexOf(r) > sent).length).toBeGreaterThan(0);
    // One read per window: four reads touch at least four distinct windows (the simulator's clock, so a
    // read taken at a window's very end may show in the next one; none shares a window with two others).
    const windows = new Map<number, number>();
    for (const r of ours) {
      const w = Math.floor(Date.parse(r.at) / WINDOW_MS);
      windows.set(w, (windows.get(w) ?? 0) + 1);
    }
    expect(windows.size).toBeGreaterThanOrEqual(3);
    expect(Math.max(...windows.values())).toBeLessThanOrEqual(2);
    // Waiting for the budget is not a failure: no job failed or spent an attempt on it.
    const jobs = await api.queues.metrics.getJobs(['completed', 'failed']);
    expect(jobs.filter((j) => j.failedReason || j.attemptsMade > 1)).toEqual([]);
    expect((await api.queues.metrics.getJobCounts('failed')).failed).toBe(0);
  }, 90_000);

  it('a collection over more posts than the budget is read over several windows by one job, none failed', async () => {
    const { apiKey, accountId } = await api.account('pro');
    const socialId = await api.connect(accountId, 'discord', 'collect-bot');
    const posts = [];
    for (let i = 0; i < 3; i += 1) posts.push(await published(apiKey, `collect ${i}`));
    for (const [i, p] of posts.entries()) {
      if (api.sim) simFiguresOf(api.sim.sim).set('discord', p.remoteId, { likes: 10 + i });
    }
    await new Promise((r) => setTimeout(r, COLLECT_MS + 200));
    await api.publisher?.reconcileNow();
    for (const [i, p] of posts.entries()) {
      const body = await pollUntil(
        async () =>
          (await request(api.app).get(`/v1/posts/${p.id}/metrics`).set(bearer(apiKey))).body as TMetricsBody,
        (b) => typeof b.platforms.discord?.likes === 'number',
        30_000,
      );
      expect(body.platforms.discord?.likes).toBe(10 + i);
    }
    const ours = readsOf(posts.map((p) => p.remoteId));
    expect(ours).toHaveLength(3);
    const windows = perWindow(ours.map((r) => r.at));
    expect(windows.size).toBeGreaterThanOrEqual(2);
    expect(Math.max(...windows.values())).toBeLessThanOrEqual(2);
    // One collection job for the account read all three, waiting delayed between windows.
    const jobs = (
      await api.queues.metrics.getJobs(['completed', 'failed', 'delayed', 'waiting', 'active'])
    ).filter(
      (j) =>
        j.name === 'metrics-collect' && (j.data as { socialAccountId?: string }).socialAccountId === socialId,
    );
    expect(jobs).toHaveLength(1);
    expect(await jobs[0]?.getState()).toBe('completed');
    expect(jobs.filter((j) => j.failedReason || j.attemptsMade > 1)).toEqual([]);
  }, 75_000);
});
