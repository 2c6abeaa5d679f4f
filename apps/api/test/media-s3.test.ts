import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { fakeMp4 } from '@sps/core';
import sharp from 'sharp';
import request from 'supertest';
import { startS3Server, type TS3Server } from '../../../packages/storage/test/s3-server.js';
import { bearer, startTestApi, type TTestApi } from './harness.js';

const TUS = { 'Tus-Resumable': '1.0.0' };

// MEDIA_STORAGE=s3 end to end, against the local S3 API server (.ci/run starts it; see s3-server.ts).

describe('media library on S3-compatible storage', () => {
  let s3: TS3Server;
  let api: TTestApi;
  let key: string;

  beforeAll(async () => {
    s3 = await startS3Server();
    api = await startTestApi({
      env: {
        MEDIA_STORAGE: 's3',
        S3_ENDPOINT: s3.endpoint,
        S3_BUCKET: s3.bucket,
        S3_REGION: 'us-east-1',
        S3_ACCESS_KEY_ID: 'S3RVER',
        S3_SECRET_ACCESS_KEY: 'S3RVER',
        S3_FORCE_PATH_STYLE: 'true',
      },
    });
    ({ apiKey: key } = await api.account('pro'));
  });
  afterAll(async () => {
    await api.close();
    await s3.stop();
  });

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
    const created = await request(api.app)
      .post('/v1/media/uploads')
      .set(bearer(key))
      .set(TUS)
      .set('Upload-Length', String(video.length));
    expect(created.status).toBe(201);
    const path = new URL(created.headers.location as string).pathname;
    const half = 5 * 1024 * 1024;
    const first = await request(api.app)
      .patch(path)
      .set(bearer(key))
      .set(TUS)
      .set('Upload-Offset', '0')
      .set('Content-Type', 'application/offset+octet-stream')
      .send(video.subarray(0, half));
    expect(first.status).toBe(204);
    const head = await request(api.app).head(path).set(bearer(key)).set(TUS);
    const offset = Number(head.headers['upload-offset']);
    expect(offset).toBe(half);
    const last = await request(api.app)
      .patch(path)
      .set(bearer(key))
      .set(TUS)
      .set('Upload-Offset', String(offset))
      .set('Content-Type', 'application/offset+octet-stream')
      .send(video.subarray(offset));
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
