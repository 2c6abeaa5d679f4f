import { createHash, randomFillSync } from 'node:crypto';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { fakeMp4, type TPlatform } from '@sps/core';
import sharp from 'sharp';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';
import { createB, settleB, simPosts, uniqueMarker } from './pipeline-helpers.js';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

// Instagram, Threads and TikTok (photos) fetch media from the URL the post names (they receive no bytes from us). With
// `sim.fetchPulledMedia` the simulator fetches it as they do, so a media-library item published to them is
// checked byte for byte: the API serves the library under PUBLIC_URL (/media/…), here a real HTTP listener.
describe('Instagram, Threads and TikTok fetch media-library items from the public URL', () => {
  let api: TTestApi;
  let server: Server;
  let handler: RequestListener = (_req, res) => res.writeHead(503).end();

  beforeAll(async () => {
    server = createServer((req, res) => handler(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    api = await startTestApi({ publisher: true, env: { PUBLIC_URL: `http://127.0.0.1:${port}` } });
    handler = api.app as unknown as RequestListener;
    if (!api.sim) throw new Error('the simulator runs with { publisher: true }');
    api.sim.sim.fetchPulledMedia = true;
  });
  afterAll(async () => {
    await api.close();
    await new Promise((resolve) => server.close(resolve));
  });

  async function upload(apiKey: string, file: Buffer, name: string): Promise<string> {
    const uploaded = await request(api.app).post('/v1/media').set(bearer(apiKey)).attach('file', file, name);
    expect(uploaded.status).toBe(201);
    return uploaded.body.url as string;
  }

  async function publish(platform: TPlatform, media: Record<string, unknown>, apiKey: string) {
    const m = uniqueMarker(platform);
    const post = await createB(api, apiKey, { content: `pulled ${m}`, platforms: [platform], media });
    expect((await request(api.app).post(`/v1/posts/${post.id}/publish`).set(bearer(apiKey))).status).toBe(
      200,
    );
    const done = await settleB(api, apiKey, post.id, 30_000);
    return { result: done.platform_results?.[platform], posts: simPosts(api, platform, m) };
  }

  it.each(['instagram', 'threads'] as const)(
    '%s: the simulator fetched exactly the uploaded image and video from the library URL',
    async (platform) => {
      const account = await api.account('pro');
      await api.connect(account.accountId, platform);
      const photo = await jpeg();
      const video = testVideo(700_000);
      const photoUrl = await upload(account.apiKey, photo, 'photo.jpg');
      const videoUrl = await upload(account.apiKey, video, 'clip.mp4');
      expect(photoUrl.startsWith(api.env.publicUrl)).toBe(true);

      const image = await publish(platform, { images: [{ url: photoUrl }] }, account.apiKey);
      expect(image.result).toMatchObject({ success: true });
      expect((image.posts[0]?.media as { pulled?: unknown } | undefined)?.pulled).toEqual([
        { url: photoUrl, bytes: photo.length, sha256: sha256(photo), type: 'image/jpeg' },
      ]);

      const clip = await publish(platform, { video: { url: videoUrl } }, account.apiKey);
      expect(clip.result).toMatchObject({ success: true });
      expect((clip.posts[0]?.media as { pulled?: unknown } | undefined)?.pulled).toEqual([
        { url: videoUrl, bytes: video.length, sha256: sha256(video), type: 'video/mp4' },
      ]);
    },
  );

  it.each(['instagram', 'threads'] as const)(
    '%s: a carousel records each item it fetched',
    async (platform) => {
      const account = await api.account('pro');
      await api.connect(account.accountId, platform);
      const photos = [await jpeg(), await jpeg()];
      const urls = [
        await upload(account.apiKey, photos[0] as Buffer, 'a.jpg'),
        await upload(account.apiKey, photos[1] as Buffer, 'b.jpg'),
      ];
      const { result, posts } = await publish(
        platform,
        { images: urls.map((url) => ({ url })) },
        account.apiKey,
      );
      expect(result).toMatchObject({ success: true });
      const pulled = (posts[0]?.media as { pulled?: { sha256: string }[] } | undefined)?.pulled;
      expect(pulled?.map((p) => p.sha256)).toEqual(photos.map(sha256));
    },
  );

  // The library refuses to delete an item a post still names (409), so a URL that no longer serves is played
  // with a library path nothing was stored under: the API answers it 404, as it would a removed file.
  it.each([
    ['instagram', 'image', '2207052'],
    ['instagram', 'video', '2207052'],
    ['threads', 'image', 'UNKNOWN'],
    ['threads', 'video', 'FAILED_DOWNLOADING_VIDEO'],
  ] as const)(
    '%s: a library %s URL that does not serve fails the post with the container error %s',
    async (platform, kind, detail) => {
      const account = await api.account('pro');
      await api.connect(account.accountId, platform);
      const url = await upload(account.apiKey, await jpeg(), 'photo.jpg');
      const missing = url.replace(
        /\/media\/[^/]+$/,
        `/media/${'0'.repeat(40)}.${kind === 'video' ? 'mp4' : 'jpg'}`,
      );
      expect((await request(api.app).get(new URL(missing).pathname)).status).toBe(404);
      const media = kind === 'video' ? { video: { url: missing } } : { images: [{ url: missing }] };
      const { result, posts } = await publish(platform, media, account.apiKey);
      expect(result).toMatchObject({ success: false });
      expect(JSON.stringify(result)).toContain(detail);
      expect(posts).toEqual([]);
    },
  );

  // TikTok pulls only photos here (the connector sends videos by FILE_UPLOAD), from a verified domain: a
  // deployment verifies its PUBLIC_URL's with TikTok, so the simulated app verifies the test's.
  describe('tiktok', () => {
    beforeAll(() => {
      api.sim?.sim.tiktokVerifiedPrefixes.push(`${api.env.publicUrl}/`);
    });

    it('tiktok: the simulator fetched exactly the uploaded photos from the library URLs', async () => {
      const account = await api.account('pro');
      await api.connect(account.accountId, 'tiktok');
      const photos = [await jpeg(), await jpeg()];
      const urls = [
        await upload(account.apiKey, photos[0] as Buffer, 'a.jpg'),
        await upload(account.apiKey, photos[1] as Buffer, 'b.jpg'),
      ];
      const { result, posts } = await publish(
        'tiktok',
        { images: urls.map((url) => ({ url })) },
        account.apiKey,
      );
      expect(result).toMatchObject({ success: true });
      expect((posts[0]?.media as { pulled?: unknown } | undefined)?.pulled).toEqual(
        photos.map((photo, i) => ({
          url: urls[i],
          bytes: photo.length,
          sha256: sha256(photo),
          type: 'image/jpeg',
        })),
      );
    });

    it('tiktok: a library photo URL that does not serve fails the post with photo_pull_failed', async () => {
      const account = await api.account('pro');
      await api.connect(account.accountId, 'tiktok');
      const url = await upload(account.apiKey, await jpeg(), 'photo.jpg');
      const missing = url.replace(/\/media\/[^/]+$/, `/media/${'0'.repeat(40)}.jpg`);
      const { result, posts } = await publish('tiktok', { images: [{ url: missing }] }, account.apiKey);
      expect(result).toMatchObject({ success: false });
      expect(JSON.stringify(result)).toContain('photo_pull_failed');
      expect(posts).toEqual([]);
    });
  });
});

/** A video the sniffers and MP4 reader accept, its media data random so another file has another hash. */
function testVideo(totalBytes: number): Buffer {
  const video = Buffer.from(fakeMp4(5, totalBytes));
  randomFillSync(video, video.indexOf('mdat') + 4);
  return video;
}

/** A small JPEG (under every network's image limit, so it is sent as uploaded). */
async function jpeg(): Promise<Buffer> {
  const noise = Buffer.alloc(64 * 48 * 3);
  randomFillSync(noise);
  return sharp(noise, { raw: { width: 64, height: 48, channels: 3 } })
    .jpeg()
    .toBuffer();
}
