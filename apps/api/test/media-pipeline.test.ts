import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import sharp from 'sharp';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';
import { createB, settleB, simPosts, uniqueMarker } from './pipeline-helpers.js';

// Through the whole pipeline with the production address policy (MEDIA_ALLOW_PRIVATE_URLS=false): media on
// a non-public address is never fetched, the network fails at once (no retry), and the error stored on the
// post says why in the user's terms, without the address the host resolved to.

describe('media downloads in the publisher (MEDIA_ALLOW_PRIVATE_URLS=false)', () => {
  let api: TTestApi;
  let images: Server;
  let port: number;
  let hits = 0;

  beforeAll(async () => {
    api = await startTestApi({ publisher: true, mediaAllowPrivate: false });
    images = createServer((_req, res) => {
      hits += 1;
      res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    });
    await new Promise<void>((resolve) => images.listen(0, '127.0.0.1', resolve));
    port = (images.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => images.close(resolve));
    await api.close();
  });

  it('refuses an image whose host resolves to loopback, stores a clear reason and posts nothing', async () => {
    const account = await api.account('pro');
    await api.connect(account.accountId, 'twitter');
    const m = uniqueMarker('ssrf');
    const post = await createB(api, account.apiKey, {
      content: `picture ${m}`,
      platforms: ['twitter'],
      media: { images: [{ url: `http://localhost:${port}/cat.png`, alt_text: 'a cat' }] },
    });
    const started = await request(api.app).post(`/v1/posts/${post.id}/publish`).set(bearer(account.apiKey));
    expect(started.status).toBe(200);
    const done = await settleB(api, account.apiKey, post.id, 10_000);
    expect(done.status).toBe('failed');
    const result = done.platform_results?.twitter;
    expect(result).toEqual({
      success: false,
      error: expect.stringContaining('is not a public internet address'),
    });
    const error = result && 'error' in result ? String(result.error) : '';
    expect(error).not.toMatch(/127\.0\.0\.1|::1/);
    expect(hits).toBe(0);
    expect(simPosts(api, 'twitter', m)).toHaveLength(0);
  });
});

describe('oversized images through the pipeline (MEDIA_ALLOW_PRIVATE_URLS=true for the loopback server)', () => {
  let api: TTestApi;
  let images: Server;
  let url: string;
  let original: number;

  beforeAll(async () => {
    api = await startTestApi({ publisher: true, networkTimeoutMs: 10_000 });
    // Noise does not compress: a 1024x1024 RGB PNG of it is about 3 MB, three times Bluesky's blob limit.
    const side = 1024;
    const png = await sharp(randomBytes(side * side * 3), { raw: { width: side, height: side, channels: 3 } })
      .png()
      .toBuffer();
    original = png.length;
    images = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'image/png' }).end(png);
    });
    await new Promise<void>((resolve) => images.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(images.address() as AddressInfo).port}/big.png`;
  });
  afterAll(async () => {
    await new Promise((resolve) => images.close(resolve));
    await api.close();
  });

  it('publishes a 3 MB PNG to Bluesky as a re-encoded blob within 1,000,000 bytes, alt text kept', async () => {
    expect(original).toBeGreaterThan(3_000_000);
    const account = await api.account('pro');
    await api.connect(account.accountId, 'bluesky');
    const m = uniqueMarker('fit');
    const post = await createB(api, account.apiKey, {
      content: `big picture ${m}`,
      platforms: ['bluesky'],
      media: { images: [{ url, alt_text: 'static' }] },
    });
    expect(
      (await request(api.app).post(`/v1/posts/${post.id}/publish`).set(bearer(account.apiKey))).status,
    ).toBe(200);
    const done = await settleB(api, account.apiKey, post.id, 30_000);
    expect(done.status).toBe('published');
    const [sent] = simPosts(api, 'bluesky', m);
    const embed = sent?.media as { images: { alt: string; image: { size: number; mimeType: string } }[] };
    expect(embed.images).toHaveLength(1);
    expect(embed.images[0]?.alt).toBe('static');
    expect(embed.images[0]?.image.mimeType).toBe('image/jpeg');
    expect(embed.images[0]?.image.size).toBeLessThanOrEqual(1_000_000);
  }, 75_000);
});
