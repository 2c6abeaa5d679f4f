import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { fakeMp4 } from '@sps/core';
import type { Express } from 'express';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';
import {
  tusCreate as create,
  tusHead as head,
  keepBytes,
  listenOnLoopback,
  MB,
  paddedMp4,
  partialPatch,
  tusPatch as patch,
  uploadPathOf as pathOf,
  secondInstance,
  sha256,
  type TListening,
  TUS,
  tusLockHeld,
} from './media-helpers.js';

// Two API instances (two apps on the same PostgreSQL, Redis and media store, as behind a load balancer):
// one upload's requests may reach either, its lock is in Redis and its quota is reserved at creation.
describe('tus uploads across two API instances', () => {
  let api: TTestApi;
  let a: Express;
  let b: Express;
  let serverA: TListening;

  beforeAll(async () => {
    api = await startTestApi();
    a = api.app;
    b = secondInstance(api);
    serverA = await listenOnLoopback(a);
  });
  afterAll(async () => {
    await serverA.close();
    await api.close();
  });

  it('creates on one, PATCHes half on the other, resumes with HEAD on the first: one item, same sha256', async () => {
    const { apiKey: key } = await api.account('pro');
    const video = paddedMp4(5, 2 * MB);
    const half = Math.floor(video.length / 2);
    const created = await create(a, key, video.length);
    expect(created.status).toBe(201);
    const path = pathOf(created);

    expect((await patch(b, key, path, 0, video.subarray(0, half))).status).toBe(204);
    expect(await head(a, key, path)).toEqual({ status: 200, offset: half });
    const last = await patch(a, key, path, half, video.subarray(half));
    expect(last.status).toBe(204);
    const mediaId = last.headers['media-id'] as string;

    const list = await request(b).get('/v1/media').set(bearer(key));
    expect(list.body.media.map((item: { id: string }) => item.id)).toEqual([mediaId]);
    const served = await request(b).get(new URL(list.body.media[0].url).pathname).buffer(true);
    expect(sha256(Buffer.from(served.body))).toBe(sha256(video));
    expect((await head(b, key, path)).status).toBe(404);
  });

  it('a HEAD on the other instance makes the instance holding a stalled PATCH let go (lock in Redis)', async () => {
    const { apiKey: key } = await api.account('pro');
    const video = paddedMp4(5, 2 * MB);
    const path = pathOf(await create(a, key, video.length));
    // A PATCH to instance A that sends 1 MB and then stalls with its connection open (a half-open client).
    const stalled = partialPatch({
      port: serverA.port,
      key,
      path,
      offset: 0,
      length: video.length,
      sent: video.subarray(0, MB),
    });
    // Wait until A holds the upload's lock (its key is in the shared Redis).
    expect(await tusLockHeld(api, path.split('/').pop() as string)).not.toBeNull();

    // B's HEAD waits for the lock, which A gives up by ending its stalled request: with one in-memory lock
    // per instance the HEAD would not wait and the stalled request would never end (this test would time out).
    const { status, offset } = await head(b, key, path);
    expect(status).toBe(200);
    await stalled;
    expect(offset).toBeGreaterThan(0);
    expect(offset).toBeLessThanOrEqual(MB);
    expect(await head(a, key, path)).toEqual({ status: 200, offset });

    const last = await patch(b, key, path, offset, video.subarray(offset));
    expect(last.status).toBe(204);
    const item = await request(a).get(`/v1/media/${last.headers['media-id']}`).set(bearer(key));
    const served = await request(a).get(new URL(item.body.url).pathname).buffer(true);
    expect(sha256(Buffer.from(served.body))).toBe(sha256(video));
  });

  it('reserves the declared length: of two large uploads created together on both instances, one is refused', async () => {
    const { apiKey: key, accountId } = await api.account('free');
    // 1,300 MB kept of the 2,048 MB quota: 748 MB left, room for one 500 MB upload, not two.
    await keepBytes(api, accountId, 1300 * MB);
    const [first, second] = await Promise.all([create(a, key, 500 * MB), create(b, key, 500 * MB)]);
    expect([first.status, second.status].sort()).toEqual([201, 413]);
    const refused = first.status === 413 ? first : second;
    expect(JSON.parse(refused.text)).toMatchObject({
      code: 'payload_too_large',
      details: { reserved_bytes: 500 * MB },
    });
    const kept = first.status === 201 ? first : second;

    // A multipart upload may not take the reserved bytes either: 248 MB are left, not 748.
    const small = await request(a)
      .post('/v1/media')
      .set(bearer(key))
      .attach('file', Buffer.from(fakeMp4(1, 16)), 'clip.mp4');
    expect(small.status).toBe(201);
    expect((await create(b, key, 300 * MB)).status).toBe(413);

    // Terminating the upload gives its bytes back.
    expect((await request(b).delete(pathOf(kept)).set(bearer(key)).set(TUS)).status).toBe(204);
    expect((await create(a, key, 500 * MB)).status).toBe(201);
  });
});
