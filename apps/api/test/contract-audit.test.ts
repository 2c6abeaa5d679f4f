import { request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { fakeMp4 } from '@sps/core';
import sharp from 'sharp';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';

// The contract's letter (shared/CONTRACT.md: Media library, Idempotent requests, Engagement, Account
// permissions) on the points the feature tests leave out: Variant A's shapes, tus discovery and headers,
// in-flight idempotency of uploads, which posts hold an item, and first_comment on every network without
// comments or replies. Black-box: HTTP only, with the default PUBLIC_URL (loopback) as a test suite would.

const TUS = { 'Tus-Resumable': '1.0.0' };
const png = (width: number, height: number, r = 200) =>
  sharp({ create: { width, height, channels: 3, background: { r, g: 10, b: 10 } } })
    .png()
    .toBuffer();

describe('contract audit: media library, engagement, permissions', () => {
  let api: TTestApi;
  let server: Server;
  let port: number;
  let key: string;
  let accountId: string;
  let otherKey: string;
  let image: Buffer;

  beforeAll(async () => {
    api = await startTestApi({ env: { METRICS_REFRESH_PER_HOUR: '2' } });
    ({ apiKey: key, accountId } = await api.account('pro'));
    ({ apiKey: otherKey } = await api.account('pro'));
    for (const p of ['twitter', 'linkedin', 'telegram', 'slack', 'discord', 'tiktok'] as const) {
      await api.connect(accountId, p);
    }
    image = await png(32, 16);
    server = api.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await api.close();
  });

  const uploadB = (bytes: Buffer, name = 'f.bin') =>
    request(api.app).post('/v1/media').set(bearer(key)).attach('file', bytes, name);
  const uploadA = (bytes: Buffer, name = 'f.bin') =>
    request(api.app).post('/api/media').set('x-api-key', key).attach('file', bytes, name);

  describe('Variant A /api/media', () => {
    it('answers 201 {success, media} with every field in camelCase, the type from the bytes', async () => {
      const res = await uploadA(image, 'not-a-picture.txt');
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        success: true,
        media: {
          id: expect.stringMatching(/^[0-9a-f-]{36}$/),
          url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/media\/[0-9a-f-]{36}\.png$/),
          type: 'image',
          mimeType: 'image/png',
          sizeBytes: image.length,
          width: 32,
          height: 16,
          durationS: null,
          altText: null,
          createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        },
      });
      const got = await request(api.app).get(`/api/media/${res.body.media.id}`).set('x-api-key', key);
      expect(got.body).toEqual({ success: true, media: res.body.media });
      // Another account's item is 404 (never 403).
      const foreign = await request(api.app)
        .get(`/api/media/${res.body.media.id}`)
        .set('x-api-key', otherKey);
      expect(foreign.status).toBe(404);
      expect(foreign.body.error).toEqual(expect.any(String));
    });

    it('names `file` in a 400 when it is missing, 415 for non-media, 413 over the cap', async () => {
      const none = await request(api.app).post('/api/media').set('x-api-key', key).field('altText', 'x');
      expect(none.status).toBe(400);
      expect(none.body.error).toMatch(/file/);
      expect(none.body.details.field).toBe('file');
      const pdf = await uploadA(Buffer.from('%PDF-1.7\n1 0 obj << >> endobj\n'), 'doc.png');
      expect(pdf.status).toBe(415);
      const { apiKey: free } = await api.account('free');
      const big = Buffer.alloc(51 * 1024 * 1024);
      image.copy(big, 0, 0, 32);
      const tooBig = await request(api.app)
        .post('/api/media')
        .set('x-api-key', free)
        .attach('file', big, 'b.png');
      expect(tooBig.status).toBe(413);
      expect(tooBig.body.details.field).toBe('file');
    });
  });

  describe('Idempotency-Key on uploads', () => {
    it('another body of the same length is 422 idempotency_key_reused (B and A)', async () => {
      // Two PNGs of one size that differ in their pixels, and one alt text changed in place.
      const red = await png(8, 8, 200);
      const blue = await png(8, 8, 100);
      expect(red.length).toBe(blue.length);
      for (const [prefix, auth] of [
        ['/v1', bearer(key)],
        ['/api', { 'x-api-key': key }],
      ] as const) {
        const send = (bytes: Buffer, alt: string) =>
          request(api.app)
            .post(`${prefix}/media`)
            .set(auth)
            .set('Idempotency-Key', `audit-same-length${prefix}`)
            .field(prefix === '/v1' ? 'alt_text' : 'altText', alt)
            .attach('file', bytes, 'p.png');
        const first = await send(red, 'aaaa');
        expect(first.status).toBe(201);
        const replay = await send(red, 'aaaa');
        expect(replay.status).toBe(201);
        expect(replay.headers['idempotent-replayed']).toBe('true');
        expect(replay.body).toEqual(first.body);
        const otherPixels = await send(blue, 'aaaa');
        expect(otherPixels.status).toBe(422);
        const otherAlt = await send(red, 'bbbb');
        expect(otherAlt.status).toBe(422);
        expect(prefix === '/v1' ? otherAlt.body.code : 'A').toBe(
          prefix === '/v1' ? 'idempotency_key_reused' : 'A',
        );
      }
    });

    it('compares a large upload by its length and first megabytes; a JSON body under a key is 400 naming file', async () => {
      const big = Buffer.alloc(5 * 1024 * 1024, 1);
      image.copy(big, 0, 0, 33);
      const send = (bytes: Buffer) =>
        request(api.app)
          .post('/v1/media')
          .set(bearer(key))
          .set('Idempotency-Key', 'audit-large')
          .attach('file', bytes, 'big.png');
      const first = await send(big);
      expect(first.status).toBe(201);
      expect(first.body.size_bytes).toBe(big.length);
      const again = await send(big);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body.id).toBe(first.body.id);
      const changed = Buffer.from(big);
      changed[1024 * 1024] = 2;
      expect((await send(changed)).status).toBe(422);
      // A declared length past the plan's cap is refused at once, key or not (no body is waited for).
      const declared = await new Promise<number>((resolve, reject) => {
        const req = httpRequest(
          {
            host: '127.0.0.1',
            port,
            path: '/v1/media',
            method: 'POST',
            headers: {
              authorization: `Bearer ${key}`,
              'idempotency-key': 'audit-declared',
              'content-type': 'multipart/form-data; boundary=x',
              'content-length': String(5 * 1024 ** 3),
            },
          },
          (res) => {
            resolve(res.statusCode ?? 0);
            res.resume();
            req.destroy();
          },
        );
        req.on('error', reject);
        req.write('--x\r\n');
      });
      expect(declared).toBe(413);
      const json = await request(api.app)
        .post('/v1/media')
        .set(bearer(key))
        .set('Idempotency-Key', 'audit-json')
        .send({ file: 'x' });
      expect(json.status).toBe(400);
      expect(json.body.details.field).toBe('file');
    });

    it('answers 409 idempotency_key_in_use while the first upload still runs, then replays it', async () => {
      const boundary = 'auditboundary1234';
      const head = Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`,
      );
      const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
      const body = Buffer.concat([head, image, tail]);
      const headers = {
        authorization: `Bearer ${key}`,
        'idempotency-key': 'audit-in-flight',
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'content-length': String(body.length),
      };
      let firstStatus = 0;
      const req = httpRequest({ host: '127.0.0.1', port, path: '/v1/media', method: 'POST', headers });
      const answered = new Promise<string>((resolve, reject) => {
        req.on('response', (res) => {
          firstStatus = res.statusCode ?? 0;
          let text = '';
          res.on('data', (c) => {
            text += c;
          });
          res.on('end', () => resolve(text));
        });
        req.on('error', reject);
      });
      // Half the body: the first request holds the key while it waits for the rest.
      await new Promise<void>((resolve) => req.write(body.subarray(0, head.length + 8), () => resolve()));
      let second: request.Response | undefined;
      for (let i = 0; i < 100; i += 1) {
        second = await request(`http://127.0.0.1:${port}`)
          .post('/v1/media')
          .set({ authorization: headers.authorization, 'idempotency-key': 'audit-in-flight' })
          .set('Content-Type', headers['content-type'])
          .send(body);
        if (second.status === 409) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(second?.status).toBe(409);
      expect(second?.body.code).toBe('idempotency_key_in_use');
      req.end(body.subarray(head.length + 8));
      const first = JSON.parse(await answered);
      expect(firstStatus).toBe(201);
      const replay = await request(`http://127.0.0.1:${port}`)
        .post('/v1/media')
        .set({ authorization: headers.authorization, 'idempotency-key': 'audit-in-flight' })
        .set('Content-Type', headers['content-type'])
        .send(body);
      expect(replay.status).toBe(201);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body.id).toBe(first.id);
    });
  });

  describe('tus 1.0 at /v1/media/uploads', () => {
    const b64 = (text: string) => Buffer.from(text).toString('base64');

    it('answers OPTIONS with the version, the extensions and the largest size', async () => {
      const res = await request(api.app).options('/v1/media/uploads').set(bearer(key));
      expect([200, 204]).toContain(res.status);
      expect(res.headers['tus-version']).toContain('1.0.0');
      expect(res.headers['tus-extension']).toEqual(expect.stringContaining('creation'));
      expect(res.headers['tus-extension']).toEqual(expect.stringContaining('termination'));
      expect(Number(res.headers['tus-max-size'])).toBe(4 * 1024 ** 3);
      // Deferred lengths are refused (400 naming Upload-Length), so they are not announced.
      expect(res.headers['tus-extension']).not.toContain('creation-defer-length');
      // A CORS preflight carries no API key: discovery answers without one (the largest file of any plan).
      const preflight = await request(api.app).options('/v1/media/uploads');
      expect(preflight.status).toBe(204);
      expect(preflight.headers['tus-version']).toBe('1.0.0');
      expect(Number(preflight.headers['tus-max-size'])).toBe(4 * 1024 ** 3);
      const { apiKey: free } = await api.account('free');
      const freeOptions = await request(api.app).options('/v1/media/uploads').set(bearer(free));
      expect(Number(freeOptions.headers['tus-max-size'])).toBe(512 * 1024 ** 2);
      // Everything else still needs the key.
      expect(
        (await request(api.app).post('/v1/media/uploads').set(TUS).set('Upload-Length', '5')).status,
      ).toBe(401);
      expect((await request(api.app).options('/v1/media/uploads').set(bearer('sps_wrong'))).status).toBe(401);
    });

    it('takes the whole file in the creation request (creation-with-upload) and names the item', async () => {
      const res = await request(api.app)
        .post('/v1/media/uploads')
        .set(bearer(key))
        .set(TUS)
        .set('Upload-Length', String(image.length))
        .set('Content-Type', 'application/offset+octet-stream')
        .send(image);
      expect(res.status).toBe(201);
      expect(res.headers['upload-offset']).toBe(String(image.length));
      const item = await request(api.app).get(`/v1/media/${res.headers['media-id']}`).set(bearer(key));
      expect(item.status).toBe(200);
      expect(item.body).toMatchObject({ type: 'image', width: 32, height: 16 });
      // The staging copy goes once the answer is out.
      const path = new URL(res.headers.location as string).pathname;
      let status = 0;
      for (let i = 0; i < 100 && status !== 404; i += 1) {
        status = (await request(api.app).head(path).set(bearer(key)).set(TUS)).status;
        if (status !== 404) await new Promise((r) => setTimeout(r, 20));
      }
      expect(status).toBe(404);
    });

    it('creates the item only when the last byte arrives; Media-Id only on the final PATCH', async () => {
      const video = Buffer.concat([Buffer.from(fakeMp4(4, 64)), Buffer.alloc(4096, 7)]);
      const before = (await request(api.app).get('/v1/media').set(bearer(key))).body.total as number;
      const created = await request(api.app)
        .post('/v1/media/uploads')
        .set(bearer(key))
        .set(TUS)
        .set('Upload-Length', String(video.length))
        .set('Upload-Metadata', `filename ${b64('v.mp4')},alt_text ${b64('clip')}`);
      expect(created.status).toBe(201);
      expect(created.headers['tus-resumable']).toBe('1.0.0');
      const path = new URL(created.headers.location as string).pathname;
      const patch = (offset: number, bytes: Buffer) =>
        request(api.app)
          .patch(path)
          .set(bearer(key))
          .set(TUS)
          .set('Upload-Offset', String(offset))
          .set('Content-Type', 'application/offset+octet-stream')
          .send(bytes);
      const part = await patch(0, video.subarray(0, 1000));
      expect(part.status).toBe(204);
      expect(part.headers['upload-offset']).toBe('1000');
      expect(part.headers['tus-resumable']).toBe('1.0.0');
      expect(part.headers['media-id']).toBeUndefined();
      expect((await request(api.app).get('/v1/media').set(bearer(key))).body.total).toBe(before);
      const head = await request(api.app).head(path).set(bearer(key)).set(TUS);
      expect(head.status).toBe(200);
      expect(head.headers['upload-offset']).toBe('1000');
      expect(head.headers['upload-length']).toBe(String(video.length));
      expect(head.headers['cache-control']).toBe('no-store');
      // A wrong offset is 409, as tus says.
      expect((await patch(10, video.subarray(10))).status).toBe(409);
      const last = await patch(1000, video.subarray(1000));
      expect(last.status).toBe(204);
      const mediaId = last.headers['media-id'] as string;
      expect(mediaId).toMatch(/^[0-9a-f-]{36}$/);
      const item = await request(api.app).get(`/v1/media/${mediaId}`).set(bearer(key));
      expect(item.body).toMatchObject({
        type: 'video',
        size_bytes: video.length,
        alt_text: 'clip',
        duration_s: 4,
      });
      expect((await request(api.app).get('/v1/media').set(bearer(key))).body.total).toBe(before + 1);
    });

    it('terminates an unfinished upload (204, then 404) and refuses requests without Tus-Resumable', async () => {
      const created = await request(api.app)
        .post('/v1/media/uploads')
        .set(bearer(key))
        .set(TUS)
        .set('Upload-Length', '100');
      const path = new URL(created.headers.location as string).pathname;
      const noVersion = await request(api.app).head(path).set(bearer(key));
      expect(noVersion.status).toBe(412);
      const gone = await request(api.app).delete(path).set(bearer(key)).set(TUS);
      expect(gone.status).toBe(204);
      expect(gone.headers['tus-resumable']).toBe('1.0.0');
      expect([404, 410]).toContain((await request(api.app).head(path).set(bearer(key)).set(TUS)).status);
    });
  });

  describe('which posts hold a library item', () => {
    const deleteB = (id: string) => request(api.app).delete(`/v1/media/${id}`).set(bearer(key));

    it('takes library URLs in media.video.url, segments[].media_urls and A mediaUrls, and refuses their deletion', async () => {
      const clip = await uploadB(Buffer.from(fakeMp4(5, 2048)), 'c.mp4');
      const still = await uploadB(image, 'i.png');
      const inA = await uploadB(await png(9, 9), 'a.png');
      expect([clip.status, still.status, inA.status]).toEqual([201, 201, 201]);

      const video = await request(api.app)
        .post('/v1/posts')
        .set(bearer(key))
        .send({ content: 'video', platforms: ['twitter'], media: { video: { url: clip.body.url } } });
      expect(video.status).toBe(201);
      const thread = await request(api.app)
        .post('/v1/posts')
        .set(bearer(key))
        .send({
          content: 'thread',
          platforms: ['twitter'],
          scheduled_for: new Date(Date.now() + 86_400_000).toISOString(),
          segments: [{ content: 'reply', media_urls: [still.body.url] }],
        });
      expect(thread.status).toBe(201);
      expect(thread.body.status).toBe('scheduled');
      const queued = await request(api.app)
        .post('/api/posts')
        .set('x-api-key', key)
        .send({
          content: 'queued',
          platforms: ['twitter'],
          mediaUrls: [inA.body.url],
          queueStatus: 'queued',
        });
      expect(queued.status).toBe(201);

      for (const [item, post] of [
        [clip, video.body.id],
        [still, thread.body.id],
        [inA, queued.body.post.id],
      ] as const) {
        const refused = await deleteB(item.body.id);
        expect(refused.status).toBe(409);
        expect(refused.body.code).toBe('media_in_use');
        expect(refused.body.details.post_ids).toEqual([post]);
        expect(refused.body.error).toContain(post);
        const refusedA = await request(api.app).delete(`/api/media/${item.body.id}`).set('x-api-key', key);
        expect(refusedA.status).toBe(409);
        expect(refusedA.body.error).toContain(post);
      }
      const unused = await uploadB(image, 'free.png');
      const removed = await deleteB(unused.body.id);
      expect(removed.status).toBe(204);
      expect(removed.text).toBe('');
    });
  });

  describe('serving an item', () => {
    it('answers without auth: Content-Type, ETag with If-None-Match, Range and its refusals', async () => {
      const bytes = Buffer.from(fakeMp4(2, 5000));
      const created = await uploadB(bytes, 'v.mp4');
      const path = new URL(created.body.url).pathname;
      const whole = await request(api.app).get(path).buffer(true);
      expect(whole.status).toBe(200);
      expect(whole.headers['content-type']).toBe('video/mp4');
      expect(whole.headers['cache-control']).toMatch(/max-age=\d+/);
      const open = await request(api.app).get(path).set('Range', 'bytes=4990-').buffer(true);
      expect(open.status).toBe(206);
      expect(open.headers['content-range']).toBe('bytes 4990-4999/5000');
      expect(open.headers['content-length']).toBe('10');
      const backwards = await request(api.app).get(path).set('Range', 'bytes=300-200');
      expect(backwards.status).toBe(416);
      expect(backwards.headers['content-range']).toBe('bytes */5000');
      const notModified = await request(api.app)
        .get(path)
        .set('If-None-Match', whole.headers.etag as string);
      expect(notModified.status).toBe(304);
      const stale = await request(api.app).get(path).set('If-None-Match', '"something-else"');
      expect(stale.status).toBe(200);
    });
  });

  describe('engagement', () => {
    it('refuses first_comment (400 naming it) for each network without comments or replies', async () => {
      for (const platform of ['telegram', 'discord', 'slack', 'tiktok']) {
        const res = await request(api.app)
          .post('/v1/posts')
          .set(bearer(key))
          .send({ content: 'hi', platforms: [platform], first_comment: 'first!' });
        expect(res.status).toBe(400);
        expect(res.body.code).toBe('validation_error');
        expect(res.body.details.field).toBe('first_comment');
      }
      const notText = await request(api.app)
        .post('/v1/posts')
        .set(bearer(key))
        .send({ content: 'hi', platforms: ['twitter'], first_comment: 42 });
      expect(notText.status).toBe(400);
      expect(notText.body.details.field).toBe('first_comment');
      const a = await request(api.app)
        .post('/api/posts')
        .set('x-api-key', key)
        .send({ content: 'hi', platforms: ['twitter'], firstComment: ['x'] });
      expect(a.status).toBe(400);
      expect(a.body.error).toMatch(/^firstComment/);
    });

    it('metrics and refresh of another account’s post or an unknown one are 404', async () => {
      const post = await request(api.app)
        .post('/v1/posts')
        .set(bearer(key))
        .send({ content: 'mine', platforms: ['twitter'] });
      for (const path of [
        `/v1/posts/${post.body.id}/metrics`,
        '/v1/posts/00000000-0000-4000-8000-000000000000/metrics',
      ]) {
        const res = await request(api.app).get(path).set(bearer(otherKey));
        expect(res.status).toBe(404);
        expect(res.body.code).toBe('not_found');
      }
    });

    it('refresh is 202, then 429 rate_limited with the spec’s details; analytics answers one row per day', async () => {
      const post = await request(api.app)
        .post('/v1/posts')
        .set(bearer(key))
        .send({ content: 'out', platforms: ['twitter'] });
      // Published on X as the publisher records it (the collection itself is the publisher's tests' part).
      await api.db.postTarget.upsert({
        where: { postId_platform: { postId: post.body.id, platform: 'twitter' } },
        create: {
          postId: post.body.id,
          platform: 'twitter',
          status: 'succeeded',
          remotePostId: '1',
          publishedAt: new Date(),
        },
        update: { status: 'succeeded', remotePostId: '1', publishedAt: new Date() },
      });
      const refresh = () =>
        request(api.app).post(`/v1/posts/${post.body.id}/metrics/refresh`).set(bearer(key));
      expect((await refresh()).status).toBe(202);
      expect((await refresh()).status).toBe(202);
      const limited = await refresh();
      expect(limited.status).toBe(429);
      expect(limited.body.code).toBe('rate_limited');
      expect(limited.body.details).toEqual(
        expect.objectContaining({
          limit: 2,
          remaining: 0,
          reset_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
          retry_after: expect.any(Number),
        }),
      );
      expect(Number(limited.headers['retry-after'])).toBe(limited.body.details.retry_after);
      const metrics = await request(api.app).get(`/v1/posts/${post.body.id}/metrics`).set(bearer(key));
      expect(metrics.body).toEqual({
        post_id: post.body.id,
        platforms: {
          twitter: {
            collected_at: null,
            impressions: null,
            views: null,
            likes: null,
            reposts: null,
            replies: null,
            quotes: null,
            bookmarks: null,
            clicks: null,
          },
        },
      });
      const res = await request(api.app)
        .get('/v1/analytics?from=2026-01-01&to=2026-01-03&platform=twitter')
        .set(bearer(key));
      expect(res.status).toBe(200);
      expect(res.body.days.map((d: { date: string }) => d.date)).toEqual([
        '2026-01-01',
        '2026-01-02',
        '2026-01-03',
      ]);
      expect(res.body.totals).toEqual(expect.objectContaining({ posts: 0 }));
    });
  });

  it('GET /v1/accounts shows permissions on every account', async () => {
    const res = await request(api.app).get('/v1/accounts').set(bearer(key));
    expect(res.status).toBe(200);
    expect(res.body.accounts.length).toBeGreaterThan(0);
    for (const account of res.body.accounts) expect(account).toHaveProperty('permissions');
  });
});
