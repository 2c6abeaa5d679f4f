import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { fakeMp4 } from '@sps/core';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';
import { b64, png, TUS, tusCreate, tusPatch, uploadPathOf } from './media-helpers.js';

// The contract's letter (shared/CONTRACT.md: Media library) on the points the feature tests leave out: tus
// discovery and headers, creation-with-upload, termination, which posts hold a library item (video,
// segment, Variant A queue), and serving an item without auth. Black-box: HTTP only, with the default
// PUBLIC_URL (loopback) as a test suite would.

describe('contract audit: tus, the posts that hold an item, serving an item', () => {
  let api: TTestApi;
  let key: string;
  let accountId: string;
  let image: Buffer;

  beforeAll(async () => {
    api = await startTestApi();
    ({ apiKey: key, accountId } = await api.account('pro'));
    await api.connect(accountId, 'twitter');
    image = await png(32, 16);
  });
  afterAll(() => api.close());

  const uploadB = (bytes: Buffer, name = 'f.bin') =>
    request(api.app).post('/v1/media').set(bearer(key)).attach('file', bytes, name);

  describe('tus 1.0 at /v1/media/uploads', () => {
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
      const created = await tusCreate(api.app, key, video.length).set(
        'Upload-Metadata',
        `filename ${b64('v.mp4')},alt_text ${b64('clip')}`,
      );
      expect(created.status).toBe(201);
      expect(created.headers['tus-resumable']).toBe('1.0.0');
      const path = uploadPathOf(created);
      const patch = (offset: number, bytes: Buffer) => tusPatch(api.app, key, path, offset, bytes);
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
      const path = uploadPathOf(await tusCreate(api.app, key, 100));
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
});
