import { createHash, randomBytes } from 'node:crypto';
import { request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { fakeMp4 } from '@sps/core';
import type { Express } from 'express';
import request from 'supertest';
import { createApi } from '../src/app.js';
import { createLogger } from '../src/logger.js';
import { bearer, startTestApi, type TTestApi } from './harness.js';

const TUS = { 'Tus-Resumable': '1.0.0' };
const MB = 1024 * 1024;
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

// Two API instances (two apps on the same PostgreSQL, Redis and media store, as behind a load balancer):
// one upload's requests may reach either, its lock is in Redis and its quota is reserved at creation.
describe('tus uploads across two API instances', () => {
  let api: TTestApi;
  let a: Express;
  let b: Express;
  let serverA: Server;
  let portA: number;

  beforeAll(async () => {
    api = await startTestApi();
    a = api.app;
    b = createApi({
      env: api.env,
      db: api.db,
      redis: api.redis,
      queues: api.queues,
      logger: createLogger('silent', 'api-test-b'),
    }).app;
    serverA = a.listen(0, '127.0.0.1');
    await new Promise((resolve) => serverA.once('listening', resolve));
    portA = (serverA.address() as AddressInfo).port;
  });
  afterAll(async () => {
    serverA.closeAllConnections();
    await new Promise((resolve) => serverA.close(resolve));
    await api.close();
  });

  const create = (app: Express, key: string, length: number) =>
    request(app).post('/v1/media/uploads').set(bearer(key)).set(TUS).set('Upload-Length', String(length));
  const patch = (app: Express, key: string, path: string, offset: number, bytes: Buffer) =>
    request(app)
      .patch(path)
      .set(bearer(key))
      .set(TUS)
      .set('Upload-Offset', String(offset))
      .set('Content-Type', 'application/offset+octet-stream')
      .send(bytes);
  const head = async (app: Express, key: string, path: string) => {
    const res = await request(app).head(path).set(bearer(key)).set(TUS);
    return { status: res.status, offset: Number(res.headers['upload-offset']) };
  };
  const pathOf = (res: request.Response) => new URL(res.headers.location as string).pathname;

  it('creates on one, PATCHes half on the other, resumes with HEAD on the first: one item, same sha256', async () => {
    const { apiKey: key } = await api.account('pro');
    const video = Buffer.concat([Buffer.from(fakeMp4(5, 64)), randomBytes(2 * MB)]);
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
    const video = Buffer.concat([Buffer.from(fakeMp4(5, 64)), randomBytes(2 * MB)]);
    const path = pathOf(await create(a, key, video.length));
    // A PATCH to instance A that sends 1 MB and then stalls with its connection open (a half-open client).
    const stalled = new Promise<void>((resolve) => {
      const req = httpRequest({
        host: '127.0.0.1',
        port: portA,
        path,
        method: 'PATCH',
        headers: {
          ...TUS,
          authorization: `Bearer ${key}`,
          'Upload-Offset': '0',
          'Content-Type': 'application/offset+octet-stream',
          'Content-Length': String(video.length),
        },
      });
      req.on('response', (res) => {
        res.resume();
        res.on('end', resolve);
      });
      req.on('error', () => resolve());
      req.on('close', () => resolve());
      req.write(video.subarray(0, MB));
    });
    // Wait until A holds the upload's lock (its key is in the shared Redis).
    const lockKey = `${api.env.QUEUE_PREFIX}:tus:lock:${path.split('/').pop()}`;
    for (let i = 0; i < 500 && (await api.redis.get(lockKey)) === null; i += 1) {
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(await api.redis.get(lockKey)).not.toBeNull();

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
    await api.db.media.create({
      data: {
        accountId,
        storageKey: 'media/00/placeholder',
        type: 'video',
        mimeType: 'video/mp4',
        sizeBytes: BigInt(1300 * MB),
        etag: '"x"',
      },
    });
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
