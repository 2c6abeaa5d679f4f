import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TPlatform } from '@sps/core';
import type { TRunningSim } from '@sps/network-sim';
import { JOBS, masterNodes } from '@sps/queue';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from '../../api/test/harness.js';
import { simCounts, sleep, waitUntil } from './support.js';

// DESIGN invariant 1: PostgreSQL is the truth and Redis only holds jobs. Deleting every key of the
// deployment's prefix loses no post: the reconciler puts back schedule jobs, publish jobs of posts left
// in `publishing`, and the interval queue's next slot; nothing publishes twice or early.

const PLATFORMS: readonly TPlatform[] = ['twitter', 'mastodon'];

describe('losing every Redis key', () => {
  let api: TTestApi;
  let sim: TRunningSim;
  let apiKey: string;
  let accountId: string;

  beforeAll(async () => {
    api = await startTestApi({
      publisher: true,
      // Any `publishing` post without a live job counts as stuck at once (default 2 minutes).
      stuckAfterMs: 0,
      // A transient failure waits long, so the half-published post below sits in `publishing` with its job delayed.
      backoffBaseMs: 60_000,
      reconcileEveryMs: 1_000,
    });
    sim = api.sim!;
    ({ apiKey, accountId } = await api.account('pro'));
    for (const platform of PLATFORMS) await api.connect(accountId, platform);
  });
  afterAll(() => api.close());

  /**
   * Deletes every key of the deployment's prefix, one atomic script per server: a running publisher writes its
   * bookkeeping keys (locks, markers) again right after, so a SCAN-then-DEL could miss or race them. On a
   * Redis Cluster the script runs on each master (KEYS sees that node's keys only) and deletes key by key
   * (a multi-key DEL across slots is refused); no wipe spans the masters atomically, each node's does.
   */
  async function wipeRedis(): Promise<number> {
    let deleted = 0;
    for (const server of masterNodes(api.redis)) {
      deleted += Number(
        await server.eval(
          `local keys = redis.call('KEYS', ARGV[1])
           for i = 1, #keys do redis.call('DEL', keys[i]) end
           return #keys`,
          0,
          `*${api.env.QUEUE_PREFIX}*`,
        ),
      );
    }
    expect(deleted).toBeGreaterThan(0);
    return deleted;
  }

  async function createB(body: Record<string, unknown>): Promise<string> {
    const res = await request(api.app).post('/v1/posts').set(bearer(apiKey)).send(body);
    expect(res.status).toBe(201);
    return res.body.id as string;
  }

  async function publishB(id: string): Promise<void> {
    const res = await request(api.app).post(`/v1/posts/${id}/publish`).set(bearer(apiKey));
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('publishing');
  }

  const statusOf = async (id: string) => (await api.db.post.findUniqueOrThrow({ where: { id } })).status;

  async function allPublished(ids: readonly string[]): Promise<boolean> {
    return (await api.db.post.count({ where: { id: { in: [...ids] }, status: 'published' } })) === ids.length;
  }

  /** Each text reached each of its networks exactly once. */
  function expectSentOnce(expected: { platforms: readonly TPlatform[]; texts: readonly string[] }[]) {
    const counts = simCounts(sim, PLATFORMS);
    const wrong: string[] = [];
    for (const { platforms, texts } of expected) {
      for (const platform of platforms) {
        for (const text of texts) {
          const n = counts.get(`${platform}|${text}`) ?? 0;
          if (n !== 1) wrong.push(`${platform}|${text}: ${n}`);
        }
      }
    }
    expect(wrong).toEqual([]);
  }

  it('rebuilds schedule, publish and queue-slot jobs from PostgreSQL: every post publishes once, none early', async () => {
    // A thread half published: Mastodon done, X sent part 1 and got a 503 for part 2 (retry in a minute).
    const halfTexts = ['rl-half-s0', 'rl-half-s1', 'rl-half-s2'];
    sim.sim.addFault({ platform: 'twitter', kind: 'slow', delayMs: 0, remaining: 1 });
    sim.sim.addFault({ platform: 'twitter', kind: 'server_error', remaining: 1 });
    const half = await createB({
      content: halfTexts[0],
      platforms: PLATFORMS,
      segments: halfTexts.slice(1).map((content) => ({ content })),
    });
    await publishB(half);
    await waitUntil(
      'the thread to be half published',
      async () => {
        const targets = await api.db.postTarget.findMany({ where: { postId: half } });
        const segments = await api.db.segmentDelivery.findMany({
          where: { postId: half, platform: 'twitter' },
        });
        return (
          targets.find((t) => t.platform === 'mastodon')?.status === 'succeeded' &&
          segments.some((s) => s.segmentIndex === 1 && s.status === 'failed')
        );
      },
      15_000,
    );
    expect(await statusOf(half)).toBe('publishing');

    // Variant A interval queue: two queued posts; the publisher plans the account's next slot.
    const queued: string[] = [];
    for (const content of ['rl-queued-1', 'rl-queued-2']) {
      const res = await request(api.app)
        .post('/api/posts')
        .set('x-api-key', apiKey)
        .send({ content, platforms: ['twitter'], queueStatus: 'queued' });
      expect(res.status).toBe(201);
      queued.push(res.body.post.id as string);
    }
    await waitUntil(
      'the next queue slot to be planned',
      async () => (await api.db.queueSettings.findUnique({ where: { accountId } }))?.nextSlotAt != null,
      15_000,
    );

    // From here no worker runs: jobs pile up in Redis only.
    await api.stopPublisher();
    const stuck: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      const id = await createB({ content: `rl-stuck-${i}`, platforms: PLATFORMS });
      await publishB(id);
      stuck.push(id);
    }
    const scheduled: { id: string; due: Date; text: string }[] = [];
    const firstDue = Date.now() + 8_000;
    for (let i = 0; i < 5; i += 1) {
      const due = new Date(firstDue + i * 400);
      const text = `rl-scheduled-${i}`;
      const id = await createB({ content: text, platforms: PLATFORMS, scheduled_for: due.toISOString() });
      scheduled.push({ id, due, text });
    }
    expect(
      await api.queues.schedule.getJob(
        JOBS.schedule.jobId({ postId: scheduled[0]!.id, dueAt: scheduled[0]!.due.getTime() }),
      ),
    ).toBeTruthy();

    const deleted = await wipeRedis();
    expect(deleted).toBeGreaterThan(0);

    // A restarted publisher (its start upserts the reconcile scheduler) and one reconcile pass.
    const publisher = await api.startPublisher();
    await publisher.reconcileNow();
    // Every schedule job is back. (Counted in Redis, not from reconcileNow's return: the restarted
    // publisher's own scheduler may run a reconcile pass at the same moment and restore some first.)
    for (const { id, due } of scheduled) {
      expect(
        await api.queues.schedule.getJob(JOBS.schedule.jobId({ postId: id, dueAt: due.getTime() })),
      ).toBeTruthy();
    }
    // The stuck posts and the half-published thread: their publish jobs are back (or already taken by the scheduled pass).
    for (const id of [...stuck, half]) {
      const post = await api.db.post.findUniqueOrThrow({ where: { id } });
      expect(
        post.status === 'published' ||
          (await api.queues.publish.getJob(JOBS.publish.jobId({ postId: id, attempt: post.publishAttempt }))),
      ).toBeTruthy();
    }
    const settings = await api.db.queueSettings.findUniqueOrThrow({ where: { accountId } });
    expect(settings.nextSlotAt).not.toBeNull();
    const slotJobId = JOBS.queueSlot.jobId({ accountId, slotAt: settings.nextSlotAt!.getTime() });
    expect(await (await api.queues['queue-slot'].getJob(slotJobId))?.getState()).toBe('delayed');

    await waitUntil(
      'the stuck posts and the half-published thread to publish',
      () => allPublished([...stuck, half]),
      20_000,
    );
    // Scheduled posts wait for their time.
    if (Date.now() < firstDue - 500) {
      for (const { id } of scheduled) expect(await statusOf(id)).toBe('scheduled');
    }
    await waitUntil('the scheduled posts to publish', () => allPublished(scheduled.map((s) => s.id)), 25_000);
    for (const { id, due, text } of scheduled) {
      const post = await api.db.post.findUniqueOrThrow({ where: { id } });
      expect(post.publishedAt!.getTime()).toBeGreaterThanOrEqual(due.getTime());
      for (const copy of sim.sim.postsOf().filter((p) => p.text === text)) {
        expect(Date.parse(copy.at)).toBeGreaterThanOrEqual(due.getTime());
      }
    }

    // The queue's rebuilt slot job fires when its time comes (promoted here instead of waiting hours):
    // the oldest queued post publishes in it, the other waits for the next slot.
    await (await api.queues['queue-slot'].getJob(slotJobId))!.promote();
    await waitUntil('the first queued post to publish', () => allPublished([queued[0]!]), 15_000);
    expect(await statusOf(queued[1]!)).toBe('draft');
    let next: Date | null = null;
    await waitUntil(
      'the following slot to be planned',
      async () => {
        next = (await api.db.queueSettings.findUniqueOrThrow({ where: { accountId } })).nextSlotAt;
        return next !== null && next.getTime() !== settings.nextSlotAt!.getTime();
      },
      10_000,
    );
    await (await api.queues['queue-slot'].getJob(
      JOBS.queueSlot.jobId({ accountId, slotAt: next!.getTime() }),
    ))!.promote();
    await waitUntil('the second queued post to publish', () => allPublished([queued[1]!]), 15_000);

    expectSentOnce([
      { platforms: PLATFORMS, texts: halfTexts },
      { platforms: PLATFORMS, texts: stuck.map((_, i) => `rl-stuck-${i}`) },
      { platforms: PLATFORMS, texts: scheduled.map((s) => s.text) },
      { platforms: ['twitter'], texts: ['rl-queued-1', 'rl-queued-2'] },
    ]);
    const thread = sim.sim.postsOf('twitter').filter((p) => halfTexts.includes(p.text));
    expect(thread.map((p) => p.text)).toEqual(halfTexts);
    expect(thread[1]!.replyTo).toBe(thread[0]!.remoteId);
  }, 160_000);

  it('a running publisher survives the wipe: the reconcile scheduler comes back by itself and repairs lost jobs', async () => {
    expect(api.publisher).toBeDefined();
    // A post whose publish job vanishes before a worker takes it.
    await api.queues.publish.pause();
    const lost = await createB({ content: 'rl-running-lost', platforms: PLATFORMS });
    await publishB(lost);
    await wipeRedis();
    await api.queues.publish.resume();
    // No reconcileNow: the keeper re-creates the job scheduler and its runs put the job back.
    await waitUntil(
      'the reconcile scheduler to come back',
      async () => (await api.queues.schedule.getJobScheduler('reconcile')) != null,
      15_000,
      200,
    );
    await waitUntil('the lost post to publish', () => allPublished([lost]), 40_000);
    // New work goes through as usual.
    const fresh = await createB({ content: 'rl-running-fresh', platforms: PLATFORMS });
    await publishB(fresh);
    await waitUntil('a new post to publish', () => allPublished([fresh]), 15_000);
    await sleep(300);
    expectSentOnce([{ platforms: PLATFORMS, texts: ['rl-running-lost', 'rl-running-fresh'] }]);
  }, 130_000);
});
