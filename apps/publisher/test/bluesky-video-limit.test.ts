import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { fakeMp4 } from '@sps/core';
import type { TRunningSim } from '@sps/network-sim';
import { JOBS } from '@sps/queue';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from '../../api/test/harness.js';
import { waitUntil } from './support.js';

// Bluesky's daily video limit is a wait, not a refusal: the connector answers `rate_limited` with a 4 h
// re-check, the publisher keeps the post `publishing` with the wait in PostgreSQL and the retry delayed,
// and the retry (promoted here instead of waiting hours) posts the video once the allowance is back.

describe('a Bluesky video over the daily limit', () => {
  let api: TTestApi;
  let sim: TRunningSim;
  let apiKey: string;
  let media: Server;
  let base = '';

  beforeAll(async () => {
    api = await startTestApi({ publisher: true });
    sim = api.sim!;
    const account = await api.account('pro');
    apiKey = account.apiKey;
    await api.connect(account.accountId, 'bluesky');
    const video = Buffer.from(fakeMp4(3, 512, { width: 1280, height: 720 }));
    media = createServer((_req, res) => res.writeHead(200, { 'content-type': 'video/mp4' }).end(video));
    await new Promise<void>((resolve) => media.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(media.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => media.close(resolve));
    await api.close();
  });

  it('waits about 4 h with the post publishing, then posts it with its aspect ratio', async () => {
    sim.sim.videoQuota.bluesky = { videos: 0, bytes: 10_000_000_000 };
    const text = `bsky-daily-${Date.now()}`;
    const created = await request(api.app)
      .post('/v1/posts')
      .set(bearer(apiKey))
      .send({
        content: text,
        platforms: ['bluesky'],
        media: { images: [], video: { url: `${base}/clip.mp4` } },
      });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const started = Date.now();
    expect((await request(api.app).post(`/v1/posts/${id}/publish`).set(bearer(apiKey))).status).toBe(200);
    const { publishAttempt } = await api.db.post.findUniqueOrThrow({ where: { id } });
    const jobId = JOBS.publish.jobId({ postId: id, attempt: publishAttempt });
    await waitUntil(
      'the retry to be delayed',
      async () => (await (await api.queues.publish.getJob(jobId))?.getState()) === 'delayed',
      10_000,
      20,
    );
    const post = await api.db.post.findUniqueOrThrow({ where: { id } });
    expect(post.status).toBe('publishing');
    const waitMs = (post.waitUntil?.getTime() ?? 0) - started;
    expect(waitMs).toBeGreaterThan(3.9 * 3_600_000);
    expect(waitMs).toBeLessThan(4.1 * 3_600_000);
    const target = await api.db.postTarget.findFirstOrThrow({ where: { postId: id, platform: 'bluesky' } });
    expect(target.status).not.toBe('failed');
    expect(sim.sim.requests.filter((r) => r.path.includes('app.bsky.video.uploadVideo'))).toHaveLength(0);

    // The next day: the allowance is back and the delayed retry runs.
    sim.sim.videoQuota.bluesky = { videos: 25, bytes: 10_000_000_000 };
    await (await api.queues.publish.getJob(jobId))?.promote();
    await waitUntil(
      'the post to be published',
      async () => (await api.db.post.findUniqueOrThrow({ where: { id } })).status === 'published',
      20_000,
    );
    const posted = sim.sim.postsOf('bluesky').filter((p) => p.text === text);
    expect(posted).toHaveLength(1);
    expect(posted[0]?.media).toMatchObject({
      $type: 'app.bsky.embed.video',
      aspectRatio: { width: 1280, height: 720 },
    });
  }, 75_000);
});
