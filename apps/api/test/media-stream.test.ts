import { createHash, randomFillSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { fakeMp4, type TPlatform } from '@sps/core';
import sharp from 'sharp';
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

// Uploaded videos (POST /v1/media) published through the simulator: the publisher reads each from the media
// store (here a directory: the item's own file, read in place) and sends it in pieces (256 KiB here, so a small file takes many); the simulator
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

  async function publishUploaded(platform: TPlatform, file: Buffer, kind: 'video' | 'image' = 'video') {
    const account = await api.account('pro');
    await api.connect(account.accountId, platform);
    const uploaded = await request(api.app)
      .post('/v1/media')
      .set(bearer(account.apiKey))
      .attach('file', file, kind === 'video' ? 'clip.mp4' : 'photo.jpg');
    expect(uploaded.status).toBe(201);
    const m = uniqueMarker(platform);
    const post = await createB(api, account.apiKey, {
      content: `streamed ${m}`,
      platforms: [platform],
      media:
        kind === 'video' ? { video: { url: uploaded.body.url } } : { images: [{ url: uploaded.body.url }] },
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

  it('LinkedIn: each uploadInstructions part streamed from the file; the parts assemble to it (video and image)', async () => {
    const video = testVideo(5 * 1024 * 1024 + 12_345);
    const media = (await publishUploaded('linkedin', video)) as { uploads: unknown[] };
    expect(media.uploads).toEqual([{ bytes: video.length, sha256: sha256(video) }]);
    const photo = await jpeg();
    const image = (await publishUploaded('linkedin', photo, 'image')) as { uploads: unknown[] };
    expect(image.uploads).toEqual([{ bytes: photo.length, sha256: sha256(photo) }]);
  });

  it('X: an uploaded image through the simple upload, byte for byte', async () => {
    const photo = await jpeg();
    const media = (await publishUploaded('twitter', photo, 'image')) as { uploads: unknown[] };
    expect(media.uploads).toEqual([{ bytes: photo.length, sha256: sha256(photo), type: 'image/jpeg' }]);
  });

  it.each(['mastodon', 'discord', 'bluesky', 'slack'] as const)(
    '%s: the video and the image as multipart file parts, byte for byte',
    async (platform) => {
      const video = testVideo(1_200_000);
      const photo = await jpeg();
      await publishUploaded(platform, video);
      await publishUploaded(platform, photo, 'image');
      const received = (api.sim?.sim.uploads ?? []).filter((u) => u.platform === platform);
      expect(received.map((u) => u.sha256)).toEqual(expect.arrayContaining([sha256(video), sha256(photo)]));
    },
  );
});

/** A small JPEG (under every network's image limit, so it is sent as uploaded). */
async function jpeg(): Promise<Buffer> {
  const noise = Buffer.alloc(64 * 48 * 3);
  randomFillSync(noise);
  return sharp(noise, { raw: { width: 64, height: 48, channels: 3 } })
    .jpeg()
    .toBuffer();
}
