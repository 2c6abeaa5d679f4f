import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { fakeMp4 } from '@sps/core';
import request from 'supertest';
import { createNetworkSimApp } from '../src/server.js';
import { SimState } from '../src/sim-state.js';

// With `fetchPulledMedia` the simulator downloads PULL_FROM_URL media after the init as TikTok does, so a
// URL that does not serve the video fails the publish instead of passing unseen.
const sim = new SimState();
const app = createNetworkSimApp(sim);
const auth = { authorization: 'Bearer tt-token' };
const video = Buffer.from(fakeMp4(5, 4096));
const files: Record<string, Buffer> = {
  '/clip.mp4': video,
  '/page.mp4': Buffer.from('<html>not a video</html>'),
  '/photo.png': Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'),
};
let server: Server;
let base = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    const body = files[req.url ?? ''];
    if (body) res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(body);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  sim.fetchPulledMedia = true;
  sim.tiktokVerifiedPrefixes.push(`${base}/`);
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

const postInfo = { title: 'pulled', privacy_level: 'SELF_ONLY' };

async function initVideo(url: string): Promise<string> {
  const res = await request(app)
    .post('/tiktok/v2/post/publish/video/init/')
    .set(auth)
    .send({ post_info: postInfo, source_info: { source: 'PULL_FROM_URL', video_url: url } });
  expect(res.status).toBe(200);
  return res.body.data.publish_id as string;
}

/** Checks status/fetch until it leaves PROCESSING_DOWNLOAD (the download runs after the init's answer). */
async function settled(publishId: string): Promise<{ status: string; fail_reason?: string }> {
  for (let i = 0; i < 100; i += 1) {
    const res = await request(app)
      .post('/tiktok/v2/post/publish/status/fetch/')
      .set(auth)
      .send({ publish_id: publishId });
    if (res.body.data.status !== 'PROCESSING_DOWNLOAD') return res.body.data;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('still downloading');
}

describe('TikTok simulator downloads PULL_FROM_URL media when fetchPulledMedia is on', () => {
  it('publishes a video whose URL serves it, recording what it fetched', async () => {
    const id = await initVideo(`${base}/clip.mp4`);
    expect(await settled(id)).toMatchObject({ status: 'PUBLISH_COMPLETE' });
    const post = sim.postsOf('tiktok').find((p) => p.remoteId === id);
    expect((post?.media as { pulled?: unknown } | undefined)?.pulled).toEqual([
      {
        url: `${base}/clip.mp4`,
        bytes: video.length,
        sha256: createHash('sha256').update(video).digest('hex'),
        type: 'video/mp4',
      },
    ]);
  });

  it.each([
    ['a URL that answers 404', 'video_pull_failed', '/missing.mp4'],
    ['bytes that are no video', 'file_format_check_failed', '/page.mp4'],
  ])('fails the publish for %s with %s', async (_what, reason, path) => {
    const id = await initVideo(`${base}${path}`);
    expect(await settled(id)).toMatchObject({ status: 'FAILED', fail_reason: reason });
    expect(sim.postsOf('tiktok').some((p) => p.remoteId === id)).toBe(false);
  });

  it('fails a photo post whose photo is missing or not JPEG/WebP', async () => {
    for (const [path, reason] of [
      ['/missing.jpg', 'photo_pull_failed'],
      ['/photo.png', 'file_format_check_failed'],
    ] as const) {
      const res = await request(app)
        .post('/tiktok/v2/post/publish/content/init/')
        .set(auth)
        .send({
          post_info: postInfo,
          source_info: { source: 'PULL_FROM_URL', photo_images: [`${base}${path}`] },
          post_mode: 'DIRECT_POST',
          media_type: 'PHOTO',
        });
      expect(res.status).toBe(200);
      expect(await settled(res.body.data.publish_id)).toMatchObject({
        status: 'FAILED',
        fail_reason: reason,
      });
    }
  });
});
