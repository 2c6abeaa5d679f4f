import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import sharp from 'sharp';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';
import { createB, settleB, simPosts, uniqueMarker } from './pipeline-helpers.js';

// X, Bluesky and Mastodon each take a video: through the whole pipeline (API, publisher, the shared media
// fetcher, each network's upload and processing wait) against the strict simulator.

describe('video and images through the publisher to X, Bluesky and Mastodon', () => {
  let api: TTestApi;
  let media: Server;
  let base: string;

  beforeAll(async () => {
    api = await startTestApi({ publisher: true, networkTimeoutMs: 5_000 });
    // An MP4 as far as its bytes tell (ftyp box), a little over one 2 MB X segment; and a real PNG.
    const video = Buffer.alloc(2 * 1024 * 1024 + 500, 3);
    video.write('\0\0\0\x18ftypisom', 0, 'latin1');
    const png = await sharp({ create: { width: 30, height: 20, channels: 3, background: '#224466' } })
      .png()
      .toBuffer();
    media = createServer((req, res) => {
      if (req.url?.endsWith('.mp4')) res.writeHead(200, { 'content-type': 'video/mp4' }).end(video);
      else res.writeHead(200, { 'content-type': 'image/png' }).end(png);
    });
    await new Promise<void>((resolve) => media.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(media.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => media.close(resolve));
    await api.close();
  });

  async function publish(body: object) {
    const account = await api.account('pro');
    for (const p of ['twitter', 'bluesky', 'mastodon'] as const) await api.connect(account.accountId, p);
    const post = await createB(api, account.apiKey, {
      platforms: ['twitter', 'bluesky', 'mastodon'],
      ...body,
    });
    const started = await request(api.app).post(`/v1/posts/${post.id}/publish`).set(bearer(account.apiKey));
    expect(started.status).toBe(200);
    return settleB(api, account.apiKey, post.id, 30_000);
  }

  it('publishes a video to all three once each network has processed it', async () => {
    const m = uniqueMarker('video');
    const done = await publish({ content: `a clip ${m}`, media: { video: { url: `${base}/clip.mp4` } } });
    expect(done.status).toBe('published');
    for (const p of ['twitter', 'bluesky', 'mastodon'] as const) {
      expect({ p, result: done.platform_results?.[p]?.success }).toEqual({ p, result: true });
    }
    expect(simPosts(api, 'twitter', m)[0]?.media).toMatchObject({ media_ids: [expect.any(String)] });
    expect(simPosts(api, 'bluesky', m)[0]?.media).toMatchObject({
      $type: 'app.bsky.embed.video',
      video: { mimeType: 'video/mp4' },
    });
    expect(simPosts(api, 'mastodon', m)[0]?.media).toHaveLength(1);
  });

  it('publishes images with their alt text to all three', async () => {
    const m = uniqueMarker('images');
    const done = await publish({
      content: `two pictures ${m}`,
      media: {
        images: [
          { url: `${base}/a.png`, alt_text: 'first' },
          { url: `${base}/b.png`, alt_text: 'second' },
        ],
      },
    });
    expect(done.status).toBe('published');
    expect(simPosts(api, 'twitter', m)[0]?.media).toMatchObject({
      media_ids: [expect.any(String), expect.any(String)],
    });
    expect(simPosts(api, 'bluesky', m)[0]?.media).toMatchObject({
      images: [
        { alt: 'first', aspectRatio: { width: 30, height: 20 } },
        { alt: 'second', aspectRatio: { width: 30, height: 20 } },
      ],
    });
    expect(simPosts(api, 'mastodon', m)[0]?.media).toHaveLength(2);
  });
});
