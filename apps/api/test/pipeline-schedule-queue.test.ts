import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';
import {
  createA,
  createB,
  getA,
  getB,
  pollUntil,
  settleB,
  simPosts,
  sleep,
  type TPostA,
  uniqueMarker,
} from './pipeline-helpers.js';

const inMs = (ms: number) => new Date(Date.now() + ms).toISOString();

/** Wall-clock hour, minute and second of an instant in a time zone. */
function localTime(date: Date | null, timeZone: string) {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
    hourCycle: 'h23',
  }).formatToParts(date ?? new Date(0));
  const part = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  return { hour: part('hour'), minute: part('minute'), second: part('second') };
}

describe('scheduling and the Variant A interval queue', () => {
  let api: TTestApi;

  beforeAll(async () => {
    api = await startTestApi({ publisher: true });
  });
  afterAll(() => api.close());

  async function freshAccount() {
    const account = await api.account('pro');
    await api.connect(account.accountId, 'twitter');
    await api.connect(account.accountId, 'mastodon');
    return account;
  }

  describe('scheduled posts', () => {
    it('publishes a B post by itself at scheduled_for, with post.scheduled written at create', async () => {
      const { apiKey, accountId } = await freshAccount();
      const m = uniqueMarker('sched');
      const due = inMs(1500);
      const post = await createB(api, apiKey, {
        content: `later ${m}`,
        platforms: ['twitter', 'mastodon'],
        scheduled_for: due,
      });
      expect(post.status).toBe('scheduled');
      expect(post.scheduled_for).toBe(due);
      const events = await api.db.event.findMany({ where: { accountId, type: 'post.scheduled' } });
      expect(
        events.map((e) => (e.data as { post: { id: string; scheduled_for: string } }).post),
      ).toMatchObject([{ id: post.id, scheduled_for: due }]);
      expect(simPosts(api, 'twitter', m)).toHaveLength(0);

      const done = await settleB(api, apiKey, post.id, 10_000, true);
      expect(done.status).toBe('published');
      expect(Date.parse(done.published_at ?? '')).toBeGreaterThanOrEqual(Date.parse(due));
      expect(Date.parse(done.published_at ?? '')).toBeLessThan(Date.parse(due) + 1500);
      expect(done.platform_results?.twitter?.success).toBe(true);
      expect(done.platform_results?.mastodon?.success).toBe(true);
      expect(simPosts(api, 'twitter', m)).toHaveLength(1);
    });

    it('publishes a Variant A scheduledFor post by itself', async () => {
      const { apiKey } = await freshAccount();
      const m = uniqueMarker('sched-a');
      const post = await createA(api, apiKey, {
        content: `a later ${m}`,
        platforms: ['mastodon'],
        scheduledFor: inMs(1200),
      });
      expect(post.published).toBe(false);
      const done = await pollUntil(
        () => getA(api, apiKey, post.id),
        (p) => p.published,
        10_000,
      );
      expect(done.published).toBe(true);
      expect(done.platformPostIds).toEqual({
        mastodon: { id: simPosts(api, 'mastodon', m)[0]?.remoteId, url: expect.any(String) },
      });
    });

    it('moving the time fires at the new time only', async () => {
      const { apiKey } = await freshAccount();
      const m = uniqueMarker('moved');
      const first = inMs(1200);
      const post = await createB(api, apiKey, {
        content: `moved ${m}`,
        platforms: ['twitter'],
        scheduled_for: first,
      });
      const second = inMs(2600);
      const moved = await request(api.app)
        .put(`/v1/posts/${post.id}`)
        .set(bearer(apiKey))
        .send({ scheduled_for: second });
      expect(moved.status).toBe(200);
      expect(moved.body).toMatchObject({ status: 'scheduled', scheduled_for: second });
      // The schedule job of the new time only (its prepare job may already have run).
      const jobs = (await api.queues.schedule.getJobs(['delayed', 'wait'])).filter(
        (j) => j.name === 'schedule' && (j.data as { postId?: string }).postId === post.id,
      );
      expect(jobs.map((j) => j.id)).toEqual([`schedule-${post.id}-${Date.parse(second)}`]);
      const stale = await api.queues.schedule.getJob(`prepare-${post.id}-${Date.parse(first)}`);
      expect(stale ? await stale.getState() : 'removed').not.toMatch(/delayed|wait/);

      await sleep(Math.max(0, Date.parse(first) - Date.now()) + 500);
      expect((await getB(api, apiKey, post.id)).status).toBe('scheduled');
      expect(simPosts(api, 'twitter', m)).toHaveLength(0);
      const done = await settleB(api, apiKey, post.id, 10_000, true);
      expect(done.status).toBe('published');
      expect(Date.parse(done.published_at ?? '')).toBeGreaterThanOrEqual(Date.parse(second));
      expect(simPosts(api, 'twitter', m)).toHaveLength(1);
    });

    it('scheduled_for: null keeps the post as a draft and nothing is published; deleting a scheduled post publishes nothing', async () => {
      const { apiKey } = await freshAccount();
      const m = uniqueMarker('unsched');
      const due = inMs(1200);
      const unscheduled = await createB(api, apiKey, {
        content: `unscheduled ${m}`,
        platforms: ['twitter'],
        scheduled_for: due,
      });
      const deleted = await createB(api, apiKey, {
        content: `deleted ${m}`,
        platforms: ['twitter'],
        scheduled_for: due,
      });
      const put = await request(api.app)
        .put(`/v1/posts/${unscheduled.id}`)
        .set(bearer(apiKey))
        .send({ scheduled_for: null });
      expect(put.status).toBe(200);
      expect(put.body).toMatchObject({ status: 'draft', scheduled_for: null });
      expect((await request(api.app).delete(`/v1/posts/${deleted.id}`).set(bearer(apiKey))).status).toBe(204);
      const jobs = (await api.queues.schedule.getJobs(['delayed', 'wait'])).filter((j) =>
        [unscheduled.id, deleted.id].includes((j.data as { postId?: string }).postId ?? ''),
      );
      expect(jobs).toHaveLength(0);

      await sleep(Math.max(0, Date.parse(due) - Date.now()) + 700);
      expect((await getB(api, apiKey, unscheduled.id)).status).toBe('draft');
      expect((await request(api.app).get(`/v1/posts/${deleted.id}`).set(bearer(apiKey))).status).toBe(404);
      expect(simPosts(api, 'twitter', m)).toHaveLength(0);
    });

    it('a scheduled post whose account is gone when due becomes failed with a per-network error', async () => {
      const { apiKey, accountId } = await freshAccount();
      const m = uniqueMarker('noacct');
      const post = await createB(api, apiKey, {
        content: `orphan ${m}`,
        platforms: ['twitter', 'mastodon'],
        scheduled_for: inMs(1200),
      });
      await api.db.socialAccount.updateMany({ where: { accountId }, data: { isActive: false } });
      const done = await settleB(api, apiKey, post.id, 10_000, true);
      expect(done.status).toBe('failed');
      expect(done.platform_results).toEqual({
        twitter: { success: false, error: expect.stringMatching(/No active twitter account.*[Rr]econnect/) },
        mastodon: { success: false, error: expect.stringMatching(/No active mastodon account/) },
      });
      const events = await api.db.event.findMany({ where: { accountId, type: 'post.failed' } });
      expect(events).toHaveLength(1);
      expect(simPosts(api, 'twitter', m)).toHaveLength(0);
    });
  });

  describe('interval queue (Variant A)', () => {
    const slotJobs = async (accountId: string) =>
      (await api.queues['queue-slot'].getJobs(['delayed', 'wait'])).filter(
        (j) => j.name === 'queue-slot' && (j.data as { accountId?: string }).accountId === accountId,
      );
    const nextSlotAt = async (accountId: string) =>
      (await api.db.queueSettings.findUnique({ where: { accountId } }))?.nextSlotAt ?? null;
    /** Waits until no queue-plan job of the account is waiting or running. */
    const planned = (accountId: string) =>
      pollUntil(
        async () =>
          (await api.queues['queue-slot'].getJobs(['wait', 'active', 'prioritized'])).filter(
            (j) => (j.data as { accountId?: string }).accountId === accountId,
          ).length,
        (n) => n === 0,
      );
    const putSettings = (apiKey: string, body: object) =>
      request(api.app).put('/api/queue-settings').set('x-api-key', apiKey).send(body);

    it('plans a slot in the settings time zone, publishes the oldest queued post when it fires, then plans the next slot', async () => {
      const { apiKey, accountId } = await freshAccount();
      const settings = {
        enabled: true,
        timezone: 'America/New_York',
        startHour: 9,
        endHour: 17,
        intervalHours: 4,
      };
      const put = await putSettings(apiKey, settings);
      expect(put.status).toBe(200);
      expect(put.body).toEqual(settings);
      const m = uniqueMarker('queue');
      const older = await createA(api, apiKey, {
        content: `${m} first`,
        platforms: ['twitter'],
        queueStatus: 'queued',
      });
      const newer = await createA(api, apiKey, {
        content: `${m} second`,
        platforms: ['twitter'],
        queue_status: 'queued',
      });
      expect([older.queueStatus, newer.queueStatus]).toEqual(['queued', 'queued']);

      const slot = await pollUntil(
        () => nextSlotAt(accountId),
        (s) => s !== null,
      );
      expect(slot).not.toBeNull();
      const local = localTime(slot, 'America/New_York');
      expect([9, 13, 17]).toContain(local.hour);
      expect([local.minute, local.second, (slot?.getTime() ?? 1) % 1000]).toEqual([0, 0, 0]);
      expect(slot?.getTime()).toBeGreaterThan(Date.now());
      expect(slot?.getTime()).toBeLessThanOrEqual(Date.now() + 24 * 3600_000);
      const jobId = `queue-slot-${accountId}-${slot?.getTime()}`;
      const job = await pollUntil(
        () => api.queues['queue-slot'].getJob(jobId),
        (j) => j !== undefined,
      );
      expect(await job?.getState()).toBe('delayed');
      expect((await slotJobs(accountId)).map((j) => j.id)).toEqual([jobId]);

      const queued = (await request(api.app).get('/api/posts?status=queued').set('x-api-key', apiKey))
        .body as { posts: TPostA[] };
      expect(queued.posts.map((p) => p.id)).toEqual([newer.id, older.id]);

      await job?.promote();
      const published = await pollUntil(
        () => getA(api, apiKey, older.id),
        (p) => p.published,
        8000,
      );
      expect(published).toMatchObject({ published: true, queueStatus: null });
      expect(simPosts(api, 'twitter', m).map((p) => p.text)).toEqual([`${m} first`]);
      expect((await getA(api, apiKey, newer.id)).published).toBe(false);

      // The next slot is the following one in the window, for the remaining post.
      const next = await pollUntil(
        () => nextSlotAt(accountId),
        (s) => s !== null && s.getTime() > (slot?.getTime() ?? 0),
      );
      expect(next?.getTime()).toBeGreaterThan(slot?.getTime() ?? 0);
      expect([9, 13, 17]).toContain(localTime(next, 'America/New_York').hour);
      const nextJobs = await pollUntil(
        () => slotJobs(accountId),
        (js) => js.some((j) => j.id === `queue-slot-${accountId}-${next?.getTime()}`),
      );
      expect(nextJobs.map((j) => j.id)).toContain(`queue-slot-${accountId}-${next?.getTime()}`);
      const afterList = (await request(api.app).get('/api/posts?status=queued').set('x-api-key', apiKey))
        .body as { posts: TPostA[] };
      expect(afterList.posts.map((p) => p.id)).toEqual([newer.id]);
    });

    it('holds queued posts while the settings are disabled, and plans once they are enabled again', async () => {
      const { apiKey, accountId } = await freshAccount();
      expect((await putSettings(apiKey, { enabled: false })).status).toBe(200);
      const post = await createA(api, apiKey, {
        content: 'held',
        platforms: ['twitter'],
        queueStatus: 'queued',
      });
      await planned(accountId);
      expect(await nextSlotAt(accountId)).toBeNull();
      expect(await slotJobs(accountId)).toHaveLength(0);

      expect(
        (
          await putSettings(apiKey, {
            enabled: true,
            timezone: 'Europe/Berlin',
            startHour: 8,
            endHour: 20,
            intervalHours: 6,
          })
        ).status,
      ).toBe(200);
      const slot = await pollUntil(
        () => nextSlotAt(accountId),
        (s) => s !== null,
      );
      expect([8, 14, 20]).toContain(localTime(slot, 'Europe/Berlin').hour);
      expect((await getA(api, apiKey, post.id)).queueStatus).toBe('queued');
    });

    it('a pending post waits for approval, then joins the queue; status=pending lists it', async () => {
      const { apiKey, accountId } = await freshAccount();
      const pending = await createA(api, apiKey, {
        content: 'needs approval',
        platforms: ['twitter'],
        queueStatus: 'pending',
      });
      await planned(accountId);
      expect(await nextSlotAt(accountId)).toBeNull();
      const listPending = (await request(api.app).get('/api/posts?status=pending').set('x-api-key', apiKey))
        .body as { posts: TPostA[] };
      expect(listPending.posts.map((p) => p.id)).toEqual([pending.id]);
      const listQueued = (await request(api.app).get('/api/posts?status=queued').set('x-api-key', apiKey))
        .body as { posts: TPostA[] };
      expect(listQueued.posts).toEqual([]);

      const approved = await request(api.app)
        .post(`/api/posts/${pending.id}/approve`)
        .set('x-api-key', apiKey);
      expect(approved.status).toBe(200);
      const slot = await pollUntil(
        () => nextSlotAt(accountId),
        (s) => s !== null,
      );
      expect(slot).not.toBeNull();
      const job = await pollUntil(
        () => api.queues['queue-slot'].getJob(`queue-slot-${accountId}-${slot?.getTime()}`),
        (j) => j !== undefined,
      );
      await job?.promote();
      const done = await pollUntil(
        () => getA(api, apiKey, pending.id),
        (p) => p.published,
        8000,
      );
      expect(done).toMatchObject({ published: true, queueStatus: null });
      // Nothing left: no further slot.
      const after = await pollUntil(
        () => nextSlotAt(accountId),
        (s) => s === null,
      );
      expect(after).toBeNull();
    });
  });
});
