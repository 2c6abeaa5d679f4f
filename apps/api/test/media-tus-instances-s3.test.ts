import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Express } from 'express';
import request from 'supertest';
import { SharedTusStaging } from '../src/media/tus-shared-staging.js';
import { TUS_EXPIRATION_MS } from '../src/media/tus-staging.js';
import { bearer, type TTestApi } from './harness.js';
import {
  listenOnLoopback,
  MB,
  paddedMp4,
  partialPatch,
  secondInstance,
  sha256,
  startS3TestApi,
  type TListening,
  TUS,
  tusCreate,
  tusHead,
  tusLockHeld,
  tusPatch,
  uploadPathOf,
} from './media-helpers.js';

// MEDIA_STORAGE=s3 with two API instances that share nothing but PostgreSQL, Redis and the bucket (each has
// its own MEDIA_DIR): tus pieces go to the bucket, the upload's state and lock to Redis.
describe('tus uploads across two API instances on S3 storage', () => {
  let api: TTestApi;
  let a: Express;
  let b: Express;
  let serverA: TListening;
  let otherMediaDir: string;
  let key: string;

  beforeAll(async () => {
    api = await startS3TestApi();
    otherMediaDir = await mkdtemp(join(tmpdir(), 'sps-media-b-'));
    a = api.app;
    b = secondInstance(api, { MEDIA_DIR: otherMediaDir });
    serverA = await listenOnLoopback(a);
    ({ apiKey: key } = await api.account('pro'));
  });
  afterAll(async () => {
    await serverA.close();
    await api.close();
    await rm(otherMediaDir, { recursive: true, force: true });
  });

  const patch = (app: Express, path: string, offset: number, bytes: Buffer) =>
    tusPatch(app, key, path, offset, bytes);
  const head = (app: Express, path: string) => tusHead(app, key, path);
  const createOn = async (app: Express, length: number) => {
    const res = await tusCreate(app, key, length);
    expect(res.status).toBe(201);
    const path = uploadPathOf(res);
    return { path, id: path.split('/').pop() as string };
  };

  it('takes pieces on either instance, keeps the bytes of a cut PATCH, and leaves nothing staged', async () => {
    const video = paddedMp4(5, 3 * MB);
    const { path, id } = await createOn(a, video.length);
    expect((await patch(b, path, 0, video.subarray(0, MB))).status).toBe(204);
    expect(await api.storage.stat(`tus-staging/${id}/0`)).toMatchObject({ size: MB });
    expect(await head(a, path)).toEqual({ status: 200, offset: MB });

    // A PATCH to A that sends 1 MB more and stalls; B's HEAD takes the lock from it.
    const stalled = partialPatch({
      port: serverA.port,
      key,
      path,
      offset: MB,
      length: video.length,
      sent: video.subarray(MB, 2 * MB),
    });
    await tusLockHeld(api, id);
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
