import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { JOBS } from '@sps/queue';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';
import { createB, settleB, simPosts, uniqueMarker } from './pipeline-helpers.js';

/**
 * Two runs of one publish job at once: what BullMQ does when a job's lock lapses while its run still
 * works (a stalled event loop under load) and the stalled check hands the job to another worker. Both runs
 * read the post before either wrote its write-ahead; only the one whose write-ahead claims the segment
 * sends (crash.test.ts under load sent a Threads segment twice this way, recorded `sent` with attempts 2),
 * and the loser, finding the row `sending` under the other run's live lease, neither reads back nor sends
 * until the lease lapses (without the lease check, it sent each segment a second time here).
 */
describe('a publish job run twice at once', () => {
  let api: TTestApi;

  beforeAll(async () => {
    // A settle wait shorter than the first run's send: the twin that lost the claim, retrying while the
    // other run still sends, would read Threads back too early and take "absent" for an answer. The claim's
    // lease (renewed every second here, from the 2 s network timeout) makes it wait for the run instead.
    api = await startTestApi({ publisher: true, networkTimeoutMs: 2_000, readbackSettleMs: 1_000 });
    // Every Threads call waits longer than the settle wait: a segment's container flow takes seconds.
    api.sim?.sim.addFault({ platform: 'threads', kind: 'slow', delayMs: 1_200, remaining: -1 });
  });
  afterAll(async () => {
    await api.close();
  });

  it('sends each segment once: the run that lost the write-ahead claim sends nothing', async () => {
    const { apiKey, accountId } = await api.account('pro');
    await api.connect(accountId, 'threads');
    const marker = uniqueMarker('double-run');
    const texts = [`first ${marker}`, `second ${marker}`];
    const post = await createB(api, apiKey, {
      content: texts[0],
      segments: [{ content: texts[1] }],
      platforms: ['threads'],
    });
    // Held, so that the job and its twin are taken together.
    await api.queues.publish.pause();
    const res = await request(api.app).post(`/v1/posts/${post.id}/publish`).set(bearer(apiKey));
    expect(res.status).toBe(200);
    const [job] = (await api.queues.publish.getJobs(['waiting', 'prioritized'])).filter(
      (j) => (j?.data as { postId?: string } | undefined)?.postId === post.id,
    );
    if (!job) throw new Error('no publish job');
    await api.queues.publish.add(job.name, job.data, {
      ...JOBS.publish.options,
      jobId: `${job.id}-twin`,
    });
    await api.queues.publish.resume();

    const done = await settleB(api, apiKey, post.id, 30_000);
    expect(done.status).toBe('published');
    // Each segment reached Threads once, and its row says so.
    expect(texts.map((t) => simPosts(api, 'threads', t).length)).toEqual([1, 1]);
    const rows = await api.db.segmentDelivery.findMany({
      where: { postId: post.id },
      orderBy: { segmentIndex: 'asc' },
    });
    expect(rows.map((r) => [r.status, r.attempts])).toEqual([
      ['sent', 1],
      ['sent', 1],
    ]);
  }, 60_000);
});
