import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { fakeMp4 } from '@sps/core';
import sharp from 'sharp';
import request from 'supertest';
import { bearer, type TTestApi } from './harness.js';
import { startS3TestApi, tusCreate, tusHead, tusPatch, uploadPathOf } from './media-helpers.js';

// MEDIA_STORAGE=s3 end to end, against the local S3 API server (.ci/run starts it; see s3-server.ts).

describe('media library on S3-compatible storage', () => {
  let api: TTestApi;
  let key: string;

  beforeAll(async () => {
    api = await startS3TestApi();
    ({ apiKey: key } = await api.account('pro'));
  });
  afterAll(() => api.close());

  it('uploads through multipart into the bucket, serves ranges from it, deletes from it', async () => {
    expect(api.storage.kind).toBe('s3');
    const image = await sharp({ create: { width: 30, height: 20, channels: 3, background: '#0a0' } })
      .png()
      .toBuffer();
    const created = await request(api.app).post('/v1/media').set(bearer(key)).attach('file', image, 'a.png');
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ width: 30, height: 20, size_bytes: image.length });
    const path = new URL(created.body.url).pathname;
    const part = await request(api.app).get(path).set('Range', 'bytes=0-7').buffer(true);
    expect(part.status).toBe(206);
    expect(Buffer.from(part.body).equals(image.subarray(0, 8))).toBe(true);
    const whole = await request(api.app).get(path).buffer(true);
    expect(Buffer.from(whole.body).equals(image)).toBe(true);
    expect((await request(api.app).delete(`/v1/media/${created.body.id}`).set(bearer(key))).status).toBe(204);
    expect((await request(api.app).get(path)).status).toBe(404);
  });

  it('reads an MP4 duration from the bucket by ranges, and takes a tus upload (staged on disk) into the bucket', async () => {
    const video = Buffer.from(fakeMp4(9, 6 * 1024 * 1024));
    const created = await tusCreate(api.app, key, video.length);
    expect(created.status).toBe(201);
    const path = uploadPathOf(created);
    const half = 5 * 1024 * 1024;
    const first = await tusPatch(api.app, key, path, 0, video.subarray(0, half));
    expect(first.status).toBe(204);
    const { offset } = await tusHead(api.app, key, path);
    expect(offset).toBe(half);
    const last = await tusPatch(api.app, key, path, offset, video.subarray(offset));
    expect(last.status).toBe(204);
    const id = last.headers['media-id'] as string;
    const item = await request(api.app).get(`/v1/media/${id}`).set(bearer(key));
    expect(item.body).toMatchObject({ type: 'video', duration_s: 9, size_bytes: video.length });
    const tail = await request(api.app)
      .get(new URL(item.body.url).pathname)
      .set('Range', `bytes=${video.length - 100}-`)
      .buffer(true);
    expect(Buffer.from(tail.body).equals(video.subarray(video.length - 100))).toBe(true);
  });
});
