import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { fakeMp4 } from '@sps/core';
import type { Express } from 'express';
import request from 'supertest';
import { startS3Server, type TS3Server } from '../../../packages/storage/test/s3-server.js';
import { createApi } from '../src/app.js';
import { createLogger } from '../src/logger.js';
import { SharedTusStaging } from '../src/media/tus-shared-staging.js';
import { TUS_EXPIRATION_MS } from '../src/media/tus-staging.js';
import { bearer, startTestApi, type TTestApi } from './harness.js';

const TUS = { 'Tus-Resumable': '1.0.0' };
const MB = 1024 * 1024;
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

// MEDIA_STORAGE=s3 with two API instances that share nothing but PostgreSQL, Redis and the bucket (each has
// its own MEDIA_DIR): tus pieces go to the bucket, the upload's state and lock to Redis.
describe('tus uploads across two API instances on S3 storage', () => {
  let s3: TS3Server;
  let api: TTestApi;
  let a: Express;
  let b: Express;
  let serverA: Server;
  let portA: number;
  let otherMediaDir: string;
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
    otherMediaDir = await mkdtemp(join(tmpdir(), 'sps-media-b-'));
    a = api.app;
    b = createApi({
      env: { ...api.env, MEDIA_DIR: otherMediaDir },
      db: api.db,
      redis: api.redis,
      queues: api.queues,
      logger: createLogger('silent', 'api-test-b'),
    }).app;
    serverA = a.listen(0, '127.0.0.1');
    await new Promise((resolve) => serverA.once('listening', resolve));
    portA = (serverA.address() as AddressInfo).port;
    ({ apiKey: key } = await api.account('pro'));
  });
  afterAll(async () => {
    serverA.closeAllConnections();
    await new Promise((resolve) => serverA.close(resolve));
    await api.close();
    await s3.stop();
    await rm(otherMediaDir, { recursive: true, force: true });
  });

  const patch = (app: Express, path: string, offset: number, bytes: Buffer) =>
    request(app)
      .patch(path)
      .set(bearer(key))
      .set(TUS)
      .set('Upload-Offset', String(offset))
      .set('Content-Type', 'application/offset+octet-stream')
      .send(bytes);
  const head = async (app: Express, path: string) => {
    const res = await request(app).head(path).set(bearer(key)).set(TUS);
    return { status: res.status, offset: Number(res.headers['upload-offset']) };
  };
  const createOn = async (app: Express, length: number) => {
    const res = await request(app)
      .post('/v1/media/uploads')
      .set(bearer(key))
      .set(TUS)
      .set('Upload-Length', String(length));
    expect(res.status).toBe(201);
    const path = new URL(res.headers.location as string).pathname;
    return { path, id: path.split('/').pop() as string };
  };

  it('takes pieces on either instance, keeps the bytes of a cut PATCH, and leaves nothing staged', async () => {
    const video = Buffer.concat([Buffer.from(fakeMp4(5, 64)), randomBytes(3 * MB)]);
    const { path, id } = await createOn(a, video.length);
    expect((await patch(b, path, 0, video.subarray(0, MB))).status).toBe(204);
    expect(await api.storage.stat(`tus-staging/${id}/0`)).toMatchObject({ size: MB });
    expect(await head(a, path)).toEqual({ status: 200, offset: MB });

    // A PATCH to A that sends 1 MB more and stalls; B's HEAD takes the lock from it.
    const stalled = new Promise<void>((resolve) => {
      const req = httpRequest({
        host: '127.0.0.1',
        port: portA,
        path,
        method: 'PATCH',
        headers: {
          ...TUS,
          authorization: `Bearer ${key}`,
          'Upload-Offset': String(MB),
          'Content-Type': 'application/offset+octet-stream',
          'Content-Length': String(video.length - MB),
        },
      });
      req.on('response', (res) => {
        res.resume();
        res.on('end', resolve);
      });
      req.on('error', () => resolve());
      req.on('close', () => resolve());
      req.write(video.subarray(MB, 2 * MB));
    });
    const lockKey = `${api.env.QUEUE_PREFIX}:tus:lock:${id}`;
    for (let i = 0; i < 500 && (await api.redis.get(lockKey)) === null; i += 1) {
      await new Promise((r) => setTimeout(r, 10));
    }
    const { offset } = await head(b, path);
    await stalled;
    expect(offset).toBeGreaterThan(MB);
    expect(offset).toBeLessThanOrEqual(2 * MB);

    const last = await patch(b, path, offset, video.subarray(offset));
    expect(last.status).toBe(204);
    const item = await request(a).get(`/v1/media/${last.headers['media-id']}`).set(bearer(key));
    expect(item.body).toMatchObject({ size_bytes: video.length, mime_type: 'video/mp4' });
    const served = await request(b).get(new URL(item.body.url).pathname).buffer(true);
    expect(sha256(Buffer.from(served.body))).toBe(sha256(video));

    // The pieces and the state are gone once the item exists.
    for (const at of [0, MB, offset]) expect(await api.storage.stat(`tus-staging/${id}/${at}`)).toBeNull();
    expect(await api.redis.get(`${api.env.QUEUE_PREFIX}:tus:upload:${id}`)).toBeNull();
    expect((await head(a, path)).status).toBe(404);
  });

  it('a PATCH with a stale offset is refused (409) and a terminated upload leaves no piece', async () => {
    const { path, id } = await createOn(b, 2 * MB);
    expect((await patch(a, path, 0, randomBytes(MB))).status).toBe(204);
    expect((await patch(b, path, 0, randomBytes(MB))).status).toBe(409);
    expect((await request(a).delete(path).set(bearer(key)).set(TUS)).status).toBe(204);
    expect(await api.storage.stat(`tus-staging/${id}/0`)).toBeNull();
    expect((await head(b, path)).status).toBe(404);
  });

  it('the hourly sweep removes an expired upload: its pieces and its state', async () => {
    const { path, id } = await createOn(a, 2 * MB);
    expect((await patch(b, path, 0, randomBytes(MB))).status).toBe(204);
    // Created 25 hours ago, as far as the index of unfinished uploads knows.
    await api.redis.zadd(`${api.env.QUEUE_PREFIX}:tus:uploads`, Date.now() - 25 * 3600_000, id);
    const staging = new SharedTusStaging({
      redis: api.redis,
      storage: api.storage,
      prefix: api.env.QUEUE_PREFIX,
      expirationMs: TUS_EXPIRATION_MS,
    });
    expect(await staging.deleteExpired()).toBe(1);
    expect(await api.storage.stat(`tus-staging/${id}/0`)).toBeNull();
    expect((await head(a, path)).status).toBe(404);
    expect(await staging.deleteExpired()).toBe(0);
  });
});
