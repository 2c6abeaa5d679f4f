import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { fakeMp4 } from '@sps/core';
import sharp from 'sharp';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';

const png = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: { r: 200, g: 10, b: 10 } } })
    .png()
    .toBuffer();

describe('media library (/v1/media, /api/media, /media/…)', () => {
  let api: TTestApi;
  let key: string;
  let otherKey: string;
  let freeKey: string;
  let image: Buffer;

  beforeAll(async () => {
    api = await startTestApi({
      env: { PUBLIC_URL: 'https://sps.example.com', TRUST_PROXY: '1', ENCRYPTION_KEY: 'ab'.repeat(32) },
    });
    ({ apiKey: key } = await api.account('pro'));
    ({ apiKey: otherKey } = await api.account('pro'));
    ({ apiKey: freeKey } = await api.account('free'));
    image = await png(64, 48);
  });
  afterAll(() => api.close());

  const upload = (bytes: Buffer, filename: string, apiKey = key, alt?: string) => {
    const req = request(api.app).post('/v1/media').set(bearer(apiKey));
    if (alt !== undefined) req.field('alt_text', alt);
    return req.attach('file', bytes, filename);
  };
  const pathOf = (url: string) => new URL(url).pathname;

  it('stores a multipart upload: type from the bytes, dimensions, alt text, a URL under PUBLIC_URL', async () => {
    // A PNG named .mp4 is an image: the name is a claim, the bytes decide.
    const res = await upload(image, 'holiday.mp4', key, 'A red square');
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      url: expect.stringMatching(/^https:\/\/sps\.example\.com\/media\/[0-9a-f-]{36}\.png$/),
      type: 'image',
      mime_type: 'image/png',
      size_bytes: image.length,
      width: 64,
      height: 48,
      duration_s: null,
      alt_text: 'A red square',
      created_at: expect.any(String),
    });
    const served = await request(api.app).get(pathOf(res.body.url)).buffer(true);
    expect(served.status).toBe(200);
    expect(served.headers['content-type']).toBe('image/png');
    expect(Buffer.from(served.body).equals(image)).toBe(true);
  });

  it('takes an Idempotency-Key: a retried upload replays the item made, another body is 422', async () => {
    const keyed = (bytes: Buffer, variant: 'v1' | 'api' = 'v1') =>
      request(api.app)
        .post(`/${variant}/media`)
        .set(bearer(key))
        .set('Idempotency-Key', `upload-${variant}-1`)
        .attach('file', bytes, 'same.png');
    const first = await keyed(image);
    expect(first.status).toBe(201);
    const again = await keyed(image);
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    const listed = await request(api.app).get('/v1/media?limit=100').set(bearer(key));
    expect(listed.body.media.filter((m: { id: string }) => m.id === first.body.id)).toHaveLength(1);
    const other = await keyed(await png(65, 48));
    expect(other.status).toBe(422);
    expect(other.body.code).toBe('idempotency_key_reused');
    const a1 = await keyed(image, 'api');
    const a2 = await keyed(image, 'api');
    expect(a1.status).toBe(201);
    expect(a2.headers['idempotent-replayed']).toBe('true');
    expect(a2.body.media.id).toBe(a1.body.media.id);
  });

  it("records a video's displayed size: a portrait phone video (landscape frames turned a quarter) is tall", async () => {
    const turned = fakeMp4(4, 20_000, { width: 1920, height: 1080, quarterTurn: true });
    const video = await upload(Buffer.from(turned), 'portrait.mp4');
    expect(video.status).toBe(201);
    expect(video.body).toMatchObject({ type: 'video', width: 1080, height: 1920, duration_s: 4 });
    const flat = await upload(Buffer.from(fakeMp4(4, 20_000, { width: 1920, height: 1080 })), 'flat.mp4');
    expect(flat.body).toMatchObject({ width: 1920, height: 1080 });
  });

  it('reads an MP4 duration from its moov box; a GIF is type gif', async () => {
    const video = await upload(Buffer.from(fakeMp4(12.5, 200_000)), 'clip.bin');
    expect(video.status).toBe(201);
    expect(video.body).toMatchObject({
      type: 'video',
      mime_type: 'video/mp4',
      duration_s: 12.5,
      size_bytes: 200_000,
    });
    const gifBytes = await sharp({ create: { width: 5, height: 7, channels: 3, background: '#0f0' } })
      .gif()
      .toBuffer();
    const gif = await upload(gifBytes, 'x.gif');
    expect(gif.status).toBe(201);
    expect(gif.body).toMatchObject({ type: 'gif', mime_type: 'image/gif', width: 5, height: 7 });
  });

  it('refuses what no network takes with 415, and a missing file with 400 naming file', async () => {
    const text = await upload(Buffer.from('just some text, not an image at all'), 'photo.jpg');
    expect(text.status).toBe(415);
    expect(text.body.code).toBe('unsupported_media_type');
    expect(text.body.details.field).toBe('file');
    const tiny = await upload(Buffer.from('GIF'), 'a.gif');
    expect(tiny.status).toBe(415);
    const none = await request(api.app).post('/v1/media').set(bearer(key)).field('alt_text', 'x');
    expect(none.status).toBe(400);
    expect(none.body.details.field).toBe('file');
    const json = await request(api.app).post('/v1/media').set(bearer(key)).send({ file: 'x' });
    expect(json.status).toBe(400);
    expect(json.body.details.field).toBe('file');
    const wrongName = await request(api.app)
      .post('/v1/media')
      .set(bearer(key))
      .attach('image', image, 'a.png');
    expect(wrongName.status).toBe(400);
    expect(wrongName.body.details.field).toBe('file');
    const longAlt = await upload(image, 'a.png', key, 'x'.repeat(1001));
    expect(longAlt.status).toBe(400);
    expect(longAlt.body.details.field).toBe('alt_text');
  });

  it('answers 413 over the per-file cap of the plan and over the quota, and keeps nothing', async () => {
    const before = await request(api.app).get('/v1/media').set(bearer(freeKey));
    // Free plan: 50 MB per image. 51 MB of PNG signature then zeros.
    const big = Buffer.alloc(51 * 1024 * 1024);
    image.copy(big, 0, 0, 32);
    const res = await upload(big, 'big.png', freeKey);
    expect(res.status).toBe(413);
    expect(res.body.code).toBe('payload_too_large');
    expect(res.body.details).toMatchObject({ field: 'file', limit_bytes: 50 * 1024 * 1024, plan: 'free' });
    const after = await request(api.app).get('/v1/media').set(bearer(freeKey));
    expect(after.body.total).toBe(before.body.total);
  });

  it('refuses a declared Content-Length over the cap before reading the body', async () => {
    const server = api.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      // 5 GB declared, a few bytes sent: the answer comes without the body ever arriving.
      const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest(
          {
            host: '127.0.0.1',
            port,
            path: '/v1/media',
            method: 'POST',
            headers: {
              authorization: `Bearer ${key}`,
              'content-type': 'multipart/form-data; boundary=x',
              'content-length': String(5 * 1024 ** 3),
            },
          },
          (res) => {
            let body = '';
            res.on('data', (chunk) => {
              body += chunk;
            });
            res.on('end', () => {
              resolve({ status: res.statusCode ?? 0, body });
              req.destroy();
            });
          },
        );
        req.on('error', reject);
        req.write('--x\r\n');
      });
      expect(answer.status).toBe(413);
      expect(JSON.parse(answer.body)).toMatchObject({
        code: 'payload_too_large',
        details: { field: 'file', limit_bytes: 4 * 1024 ** 3 },
      });
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('answers 413 when the upload would pass the account quota (free plan: 2 GB), naming quota and use', async () => {
    const { apiKey, accountId } = await api.account('free');
    // What the account keeps already: one row just under the quota (its bytes are never read here).
    await api.db.media.create({
      data: {
        accountId,
        storageKey: 'media/00/placeholder',
        type: 'video',
        mimeType: 'video/mp4',
        sizeBytes: BigInt(2 * 1024 ** 3 - 100),
        etag: '"x"',
      },
    });
    const res = await upload(image, 'a.png', apiKey);
    expect(res.status).toBe(413);
    expect(res.body.details).toMatchObject({
      field: 'file',
      quota_bytes: 2 * 1024 ** 3,
      used_bytes: 2 * 1024 ** 3 - 100,
    });
    const list = await request(api.app).get('/v1/media').set(bearer(apiKey));
    expect(list.body.total).toBe(1);
  });

  it('lists newest first with total, limit and offset; another account sees none of it', async () => {
    const { apiKey } = await api.account('pro');
    const ids: string[] = [];
    for (let i = 0; i < 3; i += 1) ids.push((await upload(image, `${i}.png`, apiKey)).body.id);
    const page = await request(api.app).get('/v1/media?limit=2').set(bearer(apiKey));
    expect(page.status).toBe(200);
    expect(page.body.total).toBe(3);
    expect(page.body.media.map((m: { id: string }) => m.id)).toEqual([ids[2], ids[1]]);
    const next = await request(api.app).get('/v1/media?limit=2&offset=2').set(bearer(apiKey));
    expect(next.body.media.map((m: { id: string }) => m.id)).toEqual([ids[0]]);
    const bad = await request(api.app).get('/v1/media?limit=0').set(bearer(apiKey));
    expect(bad.status).toBe(400);
    expect(bad.body.details.field).toBe('limit');
    // Tenancy: another account gets 404 for the item and cannot delete it.
    expect((await request(api.app).get(`/v1/media/${ids[0]}`).set(bearer(otherKey))).status).toBe(404);
    expect((await request(api.app).delete(`/v1/media/${ids[0]}`).set(bearer(otherKey))).status).toBe(404);
    expect((await request(api.app).get(`/v1/media/${ids[0]}`).set(bearer(apiKey))).status).toBe(200);
    expect((await request(api.app).get('/v1/media/not-a-uuid').set(bearer(apiKey))).status).toBe(404);
  });

  it('serves ranges with 206, 416 outside the object, ETag and caching headers', async () => {
    const video = Buffer.from(fakeMp4(3, 10_000));
    const created = await upload(video, 'v.mp4');
    const path = pathOf(created.body.url);
    const whole = await request(api.app).get(path).buffer(true);
    expect(whole.status).toBe(200);
    expect(whole.headers).toMatchObject({
      'accept-ranges': 'bytes',
      'content-type': 'video/mp4',
      'content-length': '10000',
      'cache-control': 'public, max-age=31536000, immutable',
    });
    const etag = whole.headers.etag as string;
    expect(etag).toMatch(/^".+"$/);
    const part = await request(api.app).get(path).set('Range', 'bytes=100-199').buffer(true);
    expect(part.status).toBe(206);
    expect(part.headers['content-range']).toBe('bytes 100-199/10000');
    expect(Buffer.from(part.body).equals(video.subarray(100, 200))).toBe(true);
    const suffix = await request(api.app).get(path).set('Range', 'bytes=-10').buffer(true);
    expect(suffix.status).toBe(206);
    expect(Buffer.from(suffix.body).equals(video.subarray(9990))).toBe(true);
    const outside = await request(api.app).get(path).set('Range', 'bytes=20000-');
    expect(outside.status).toBe(416);
    expect(outside.headers['content-range']).toBe('bytes */10000');
    const cached = await request(api.app).get(path).set('If-None-Match', etag);
    expect(cached.status).toBe(304);
    const head = await request(api.app).head(path);
    expect(head.status).toBe(200);
    expect(head.headers['content-length']).toBe('10000');
    // The id is the secret: an unknown one is 404, with or without an extension.
    expect((await request(api.app).get('/media/00000000-0000-4000-8000-000000000000.mp4')).status).toBe(404);
    expect((await request(api.app).get('/media/../../etc/passwd')).status).toBe(404);
  });

  it('answers a JSON 503 when the media table cannot be read (never an HTML error page)', async () => {
    const created = await upload(image, 'a.png');
    await api.db.$executeRawUnsafe('ALTER TABLE media RENAME TO media_away');
    try {
      const res = await request(api.app).get(new URL(created.body.url).pathname);
      expect(res.status).toBe(503);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.headers['retry-after']).toBe('5');
    } finally {
      await api.db.$executeRawUnsafe('ALTER TABLE media_away RENAME TO media');
    }
  });

  it('deletes an item no pending post uses (204, URL gone); 409 media_in_use naming the posts otherwise', async () => {
    const created = await upload(image, 'a.png');
    const { id, url } = created.body as { id: string; url: string };
    const post = await request(api.app)
      .post('/v1/posts')
      .set(bearer(key))
      .send({ content: 'with an uploaded image', platforms: ['twitter'], media: { images: [{ url }] } });
    expect(post.status).toBe(201);
    const refused = await request(api.app).delete(`/v1/media/${id}`).set(bearer(key));
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('media_in_use');
    expect(refused.body.details.post_ids).toEqual([post.body.id]);
    // Variant A says the same in its shape.
    const refusedA = await request(api.app).delete(`/api/media/${id}`).set(bearer(key));
    expect(refusedA.status).toBe(409);
    expect(refusedA.body.error).toMatch(/pending post/);
    expect((await request(api.app).delete(`/v1/posts/${post.body.id}`).set(bearer(key))).status).toBeLessThan(
      300,
    );
    const removed = await request(api.app).delete(`/v1/media/${id}`).set(bearer(key));
    expect(removed.status).toBe(204);
    expect((await request(api.app).get(pathOf(url))).status).toBe(404);
    expect((await request(api.app).get(`/v1/media/${id}`).set(bearer(key))).status).toBe(404);
  });

  it('Variant A: POST /api/media answers {success, media} in camelCase', async () => {
    const res = await request(api.app)
      .post('/api/media')
      .set('x-api-key', key)
      .field('altText', 'alt A')
      .attach('file', image, 'a.png');
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      success: true,
      media: expect.objectContaining({
        mimeType: 'image/png',
        sizeBytes: image.length,
        altText: 'alt A',
        durationS: null,
      }),
    });
    const list = await request(api.app).get('/api/media?limit=1').set('x-api-key', key);
    expect(list.body).toMatchObject({ success: true, total: expect.any(Number), hasMore: true });
    const text = await request(api.app)
      .post('/api/media')
      .set('x-api-key', key)
      .attach('file', Buffer.from('hello there, world!'), 'a.png');
    expect(text.status).toBe(415);
    expect(text.body.details.field).toBe('file');
    expect(text.body.fix).toBeDefined();
  });
});
