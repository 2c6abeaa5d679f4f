import { createHash, randomFillSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { fakeMp4, type TPlatform } from '@sps/core';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';
import { createB, settleB, simPosts, uniqueMarker } from './pipeline-helpers.js';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** A video the sniffers and MP4 reader accept, its media data random so a misplaced piece changes the hash. */
function testVideo(totalBytes: number): Buffer {
  const video = Buffer.from(fakeMp4(5, totalBytes));
  randomFillSync(video, video.indexOf('mdat') + 4);
  return video;
}

// Uploaded videos (POST /v1/media) published through the simulator: the publisher spools each from the media
// store to a temporary file and sends it in pieces (256 KiB here, so a small file takes many); the simulator
// checks each network's piece rules and hashes what it assembled.
describe('streaming uploaded videos to the networks in pieces', () => {
  let api: TTestApi;

  beforeAll(async () => {
    api = await startTestApi({
      publisher: true,
      mediaAllowPrivate: false,
      uploadChunkBytes: 256 * 1024,
      env: { PUBLIC_URL: 'http://127.0.0.1:9' },
    });
  });
  afterAll(() => api.close());

  async function publishUploaded(platform: TPlatform, video: Buffer) {
    const account = await api.account('pro');
    await api.connect(account.accountId, platform);
    const uploaded = await request(api.app)
      .post('/v1/media')
      .set(bearer(account.apiKey))
      .attach('file', video, 'clip.mp4');
    expect(uploaded.status).toBe(201);
    const m = uniqueMarker(platform);
    const post = await createB(api, account.apiKey, {
      content: `streamed ${m}`,
      platforms: [platform],
      media: { video: { url: uploaded.body.url } },
    });
    expect(
      (await request(api.app).post(`/v1/posts/${post.id}/publish`).set(bearer(account.apiKey))).status,
    ).toBe(200);
    const done = await settleB(api, account.apiKey, post.id, 30_000);
    expect(done.platform_results?.[platform]).toMatchObject({ success: true });
    return simPosts(api, platform, m)[0]?.media;
  }

  it('X: APPEND segments of 256 KiB assemble to the uploaded file', async () => {
    const video = testVideo(1_500_000);
    const media = (await publishUploaded('twitter', video)) as { uploads: unknown[] };
    expect(media.uploads).toEqual([{ bytes: video.length, sha256: sha256(video), type: 'video/mp4' }]);
    const appends = (api.sim?.sim.requests ?? []).filter(
      (r) => r.platform === 'twitter' && r.path.endsWith('/append'),
    );
    expect(appends.length).toBeGreaterThanOrEqual(6);
  });

  it('YouTube: resumable chunks of 256 KiB assemble to the uploaded file', async () => {
    const video = testVideo(1_300_000);
    const media = await publishUploaded('youtube', video);
    expect(media).toMatchObject({ bytes: video.length, sha256: sha256(video) });
    const chunks = (api.sim?.sim.requests ?? []).filter(
      (r) => r.platform === 'youtube' && r.method === 'PUT' && r.path.includes('upload_id'),
    );
    expect(chunks.length).toBe(Math.ceil(video.length / (256 * 1024)));
  });

  it('TikTok: FILE_UPLOAD chunks (5 MB at least, the last one taking the rest) assemble to the uploaded file', async () => {
    const video = testVideo(11 * 1024 * 1024);
    const media = (await publishUploaded('tiktok', video)) as { video: unknown };
    expect(media.video).toMatchObject({ bytes: video.length, sha256: sha256(video) });
  });
});
