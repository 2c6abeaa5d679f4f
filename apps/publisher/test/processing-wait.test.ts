import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TRunningSim } from '@sps/network-sim';
import { JOBS } from '@sps/queue';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from '../../api/test/harness.js';
import { libraryImage, startPublisherProcess, waitUntil } from './support.js';

// DESIGN invariant 10: a post whose Instagram container is still processing holds no worker slot. The
// connector saves the container id and answers `pending`; the publisher records the wait in PostgreSQL
// (`posts.wait_until`, the segment's progress) and delays the same publish job; each check is one short run.
// A Redis flush or a publisher stopped during the wait resumes from PostgreSQL, and the video is posted once.

const PROCESSING_MS = 1_500;

describe('waiting for media processing', () => {
  let api: TTestApi;
  let sim: TRunningSim;
  let apiKey: string;

  beforeAll(async () => {
    api = await startTestApi({
      publisher: true,
      stuckAfterMs: 0,
      // Every reconcile in this file is asked for (reconcileNow), at the moment the test means.
      reconcileEveryMs: 3_600_000,
      processingWait: { intervalMs: 300, maxWaitMs: 60_000 },
    });
    sim = api.sim!;
    const account = await api.account('pro');
    apiKey = account.apiKey;
    await api.connect(account.accountId, 'instagram');
    await api.connect(account.accountId, 'mastodon');
    await api.connect(account.accountId, 'slack');
    // Video containers stay IN_PROGRESS this long after they are made.
    sim.sim.processingMs.instagram = PROCESSING_MS;
  });
  afterAll(() => api.close());

  /** Creates the post and asks to publish it now: its id, its publish attempt and job, and when it was asked. */
  async function publishNow(
    body: object,
  ): Promise<{ id: string; publishAttempt: number; jobId: string; askedAt: number }> {
    const created = await request(api.app).post('/v1/posts').set(bearer(apiKey)).send(body);
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const askedAt = Date.now();
    const res = await request(api.app).post(`/v1/posts/${id}/publish`).set(bearer(apiKey));
    expect(res.status).toBe(200);
    const { publishAttempt } = await api.db.post.findUniqueOrThrow({ where: { id } });
    return {
      id,
      publishAttempt,
      jobId: JOBS.publish.jobId({ postId: id, attempt: publishAttempt }),
      askedAt,
    };
  }

  const publishVideo = (text: string) =>
    publishNow({
      content: text,
      platforms: ['instagram'],
      media: { images: [], video: { url: `https://cdn.example.com/${text}.mp4` } },
    });

  /** The wait as PostgreSQL holds it: the container id saved on the segment, the post's wait_until set. */
  async function waitingInPostgres(id: string): Promise<boolean> {
    const post = await api.db.post.findUniqueOrThrow({ where: { id } });
    const segment = await api.db.segmentDelivery.findFirst({ where: { postId: id, platform: 'instagram' } });
    const meta = segment?.remoteMeta as Record<string, string> | null | undefined;
    return post.status === 'publishing' && post.waitUntil !== null && Boolean(meta?.container);
  }

  const jobState = async (jobId: string) => (await api.queues.publish.getJob(jobId))?.getState();
  const delayed = (jobId: string, what = 'the publish job to be delayed', timeoutMs = 5_000) =>
    waitUntil(what, async () => (await jobState(jobId)) === 'delayed', timeoutMs, 10);
  /** Waits until the Instagram container's wait is recorded in PostgreSQL and its publish job is delayed. */
  async function processingWaitHeld(id: string, jobId: string): Promise<void> {
    await waitUntil('the wait to be recorded in PostgreSQL', () => waitingInPostgres(id), 10_000, 20);
    await delayed(jobId);
  }
  const instagramPosts = (text: string) =>
    sim.sim.postsOf('instagram').filter((p) => p.text === text && !p.deleted);
  const published = async (id: string) =>
    (await api.db.post.findUniqueOrThrow({ where: { id } })).status === 'published';

  it('frees the slot while the container processes, then publishes the video once', async () => {
    const text = `pw-slot-${Date.now()}`;
    const { id, jobId } = await publishVideo(text);
    // The job is delayed, not active: no worker slot is held while Instagram processes.
    await processingWaitHeld(id, jobId);
    expect(await api.queues.publish.getActiveCount()).toBe(0);
    expect(instagramPosts(text)).toHaveLength(0);
    await waitUntil('the video to be published', () => published(id), 20_000);
    expect(instagramPosts(text)).toHaveLength(1);
    // One container made: each check resumed the saved one instead of starting again.
    const creates = sim.sim.requests.filter(
      (r) =>
        r.platform === 'instagram' &&
        r.method === 'POST' &&
        r.path.endsWith('/media') &&
        JSON.stringify(r.body).includes(text),
    );
    expect(creates).toHaveLength(1);
  });

  it('resumes the wait from PostgreSQL after Redis loses the job', async () => {
    const text = `pw-flush-${Date.now()}`;
    const { id, jobId } = await publishVideo(text);
    await processingWaitHeld(id, jobId);
    // Redis flushed: the delayed job is gone.
    await (await api.queues.publish.getJob(jobId))?.remove();
    expect(await api.queues.publish.getJob(jobId)).toBeUndefined();
    const { publishing } = await api.publisher!.reconcileNow();
    expect(publishing).toBeGreaterThanOrEqual(1);
    expect(await api.queues.publish.getJob(jobId)).toBeTruthy();
    await waitUntil('the video to be published', () => published(id), 20_000);
    expect(instagramPosts(text)).toHaveLength(1);
  });

  it('a publisher stopped during the wait: the next one resumes it and posts once', async () => {
    const text = `pw-stop-${Date.now()}`;
    const { id, jobId } = await publishVideo(text);
    await processingWaitHeld(id, jobId);
    await api.stopPublisher();
    await new Promise((r) => setTimeout(r, PROCESSING_MS));
    expect(instagramPosts(text)).toHaveLength(0);
    await api.startPublisher();
    // A reconcile meanwhile finds the delayed job in place and adds none.
    await api.publisher!.reconcileNow();
    await waitUntil('the video to be published', () => published(id), 20_000);
    expect(instagramPosts(text)).toHaveLength(1);
  });

  it('a retry-after is kept in PostgreSQL: after Redis loses the job, it comes back delayed to that time', async () => {
    const text = `pw-429-${Date.now()}`;
    sim.sim.addFault({
      platform: 'mastodon',
      kind: 'rate_limited',
      retryAfterSeconds: 3,
      remaining: 1,
      pathIncludes: '/api/v1/statuses',
    });
    const { id, jobId, askedAt } = await publishNow({ content: text, platforms: ['mastodon'] });
    await waitUntil(
      'the retry-after to be recorded',
      async () => (await api.db.post.findUniqueOrThrow({ where: { id } })).waitUntil !== null,
      10_000,
      20,
    );
    const { waitUntil: until } = await api.db.post.findUniqueOrThrow({ where: { id } });
    expect(until!.getTime()).toBeGreaterThanOrEqual(askedAt + 2_000);
    await delayed(jobId, 'the retry to be delayed');
    await (await api.queues.publish.getJob(jobId))?.remove();
    await api.publisher!.reconcileNow();
    const readded = await api.queues.publish.getJob(jobId);
    expect(await readded?.getState()).toBe('delayed');
    expect((readded?.timestamp ?? 0) + (readded?.delay ?? 0)).toBeGreaterThanOrEqual(until!.getTime() - 50);
    await waitUntil('the post to be published', () => published(id), 20_000);
    expect(sim.sim.postsOf('mastodon').filter((p) => p.text === text)).toHaveLength(1);
  }, 75_000);

  it('a rate limit with a retry-after spends no attempt: more 429s than the job has attempts, then published', async () => {
    const text = `pw-429-many-${Date.now()}`;
    // One more 429 than the publish job's attempts: each counted as an attempt, the post would fail.
    const refusals = (JOBS.publish.options.attempts ?? 1) + 1;
    sim.sim.addFault({
      platform: 'mastodon',
      kind: 'rate_limited',
      retryAfterSeconds: 1,
      remaining: refusals,
      pathIncludes: '/api/v1/statuses',
    });
    const { id, jobId, publishAttempt } = await publishNow({ content: text, platforms: ['mastodon'] });
    await delayed(jobId, 'the wait to be delayed', 10_000);
    // Moved to delayed, not failed: no attempt made, no failure recorded on the job.
    const waiting = await api.queues.publish.getJob(jobId);
    expect(waiting?.attemptsMade).toBe(0);
    expect(waiting?.failedReason ?? null).toBeNull();
    await waitUntil(
      'the post to be final',
      async () => (await api.db.post.findUniqueOrThrow({ where: { id } })).status !== 'publishing',
      60_000,
      100,
    );
    expect((await api.db.post.findUniqueOrThrow({ where: { id } })).status).toBe('published');
    expect(sim.sim.postsOf('mastodon').filter((p) => p.text === text)).toHaveLength(1);
    // Sent once per 429 and once more: the same job the whole time, the same publish attempt.
    const segment = await api.db.segmentDelivery.findFirst({ where: { postId: id, platform: 'mastodon' } });
    expect(segment?.attempts).toBe(refusals + 1);
    expect((await api.db.post.findUniqueOrThrow({ where: { id } })).publishAttempt).toBe(publishAttempt);
  }, 90_000);

  it('frees the slot while Slack completes the share of an uploaded image, then records the message once', async () => {
    // The Slack message exists after files.completeUploadExternal; its ts shows once sharing completes.
    sim.sim.processingMs.slack = PROCESSING_MS;
    const imageUrl = await libraryImage(api, apiKey, 'share.png');
    const text = `pw-slack-${Date.now()}`;
    const { id, jobId } = await publishNow({
      content: text,
      platforms: ['slack'],
      media: { images: [{ url: imageUrl }], video: null },
    });
    await waitUntil(
      'the share wait to be recorded in PostgreSQL',
      async () => {
        const post = await api.db.post.findUniqueOrThrow({ where: { id } });
        const segment = await api.db.segmentDelivery.findFirst({ where: { postId: id, platform: 'slack' } });
        const meta = segment?.remoteMeta as Record<string, string> | null | undefined;
        return post.status === 'publishing' && post.waitUntil !== null && Boolean(meta?.sharedFile);
      },
      10_000,
      20,
    );
    await delayed(jobId);
    expect(await api.queues.publish.getActiveCount()).toBe(0);
    await waitUntil('the message to be recorded', () => published(id), 20_000);
    const shares = sim.sim.requests.filter(
      (r) => r.path.endsWith('/files.completeUploadExternal') && JSON.stringify(r.body).includes(text),
    );
    expect(shares).toHaveLength(1);
    expect(sim.sim.postsOf('slack').filter((p) => p.text === text)).toHaveLength(1);
    const { remoteId } = await api.db.segmentDelivery.findFirstOrThrow({
      where: { postId: id, platform: 'slack' },
    });
    expect(sim.sim.getPost('slack', remoteId ?? '')?.text).toBe(text);
  }, 75_000);

  it('SIGKILL of the publisher process during the waits: the restarted one resumes them, each video posted once', async () => {
    // The real process (apps/publisher/dist/main.js) with short checks; the in-process worker steps aside.
    await api.stopPublisher();
    const env = { PROCESSING_CHECK_EVERY: '300ms', PROCESSING_MAX_WAIT: '1m' };
    const first = startPublisherProcess(api, sim, env);
    const texts = [0, 1, 2, 3, 4].map((i) => `pw-kill-${i}-${Date.now()}`);
    const ids: string[] = [];
    for (const text of texts) ids.push((await publishVideo(text)).id);
    await waitUntil(
      'every wait to be recorded in PostgreSQL',
      async () => (await Promise.all(ids.map(waitingInPostgres))).every(Boolean),
      30_000,
      20,
    );
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    const second = startPublisherProcess(api, sim, env);
    try {
      await waitUntil(
        'every video to be published',
        async () => (await Promise.all(ids.map(published))).every(Boolean),
        60_000,
        100,
      );
    } finally {
      await second.stop();
    }
    for (const text of texts) expect(instagramPosts(text)).toHaveLength(1);
  }, 150_000);
});
