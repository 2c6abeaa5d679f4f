import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';
import {
  b64,
  keepBytes,
  listenOnLoopback,
  MB,
  paddedMp4,
  partialPatch,
  type TListening,
  TUS,
  tusCreate,
  tusHead,
  tusPatch,
  uploadPathOf,
} from './media-helpers.js';

describe('tus 1.0 resumable uploads (/v1/media/uploads)', () => {
  let api: TTestApi;
  let server: TListening;
  let key: string;

  beforeAll(async () => {
    api = await startTestApi();
    ({ apiKey: key } = await api.account('pro'));
    server = await listenOnLoopback(api.app);
  });
  afterAll(async () => {
    await server.close();
    await api.close();
  });

  const create = (
    length: number,
    apiKey = key,
    metadata = `filename ${b64('clip.mp4')},alt_text ${b64('a clip')}`,
  ) => tusCreate(api.app, apiKey, length).set('Upload-Metadata', metadata);
  const offsetOf = (path: string, apiKey = key) => tusHead(api.app, apiKey, path);

  /** Sends `bytes` as a PATCH body over a real socket and cuts the connection after `cutAfter` bytes. */
  const patchThenDrop = (path: string, bytes: Buffer, cutAfter: number) =>
    partialPatch({
      port: server.port,
      key,
      path,
      offset: 0,
      length: bytes.length,
      sent: bytes.subarray(0, cutAfter),
      drop: true,
    });

  it('resumes after a dropped connection and creates the item on the last byte (Media-Id)', async () => {
    const video = paddedMp4(7, 3 * MB);
    const created = await create(video.length);
    expect(created.status).toBe(201);
    const path = uploadPathOf(created);
    expect(path).toMatch(/^\/v1\/media\/uploads\/[0-9a-f]{64}$/);

    await patchThenDrop(path, video, MB);
    // The server keeps what arrived before the drop; ask until its write of that part has settled.
    let offset = -1;
    for (let i = 0; i < 200; i += 1) {
      const now = (await offsetOf(path)).offset;
      if (now === offset && now > 0) break;
      offset = now;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(offset).toBeGreaterThan(0);
    expect(offset).toBeLessThan(video.length);

    const rest = await tusPatch(api.app, key, path, offset, video.subarray(offset));
    expect(rest.status).toBe(204);
    const mediaId = rest.headers['media-id'] as string;
    expect(mediaId).toMatch(/^[0-9a-f-]{36}$/);

    const item = await request(api.app).get(`/v1/media/${mediaId}`).set(bearer(key));
    expect(item.status).toBe(200);
    expect(item.body).toMatchObject({
      type: 'video',
      mime_type: 'video/mp4',
      size_bytes: video.length,
      alt_text: 'a clip',
    });
    const served = await request(api.app).get(new URL(item.body.url).pathname).buffer(true);
    expect(Buffer.from(served.body).equals(video)).toBe(true);
    // The staging copy is gone once the item exists.
    expect((await offsetOf(path)).status).toBe(404);
  });

  it('is the owner’s only: another account gets 404 on HEAD, PATCH and DELETE', async () => {
    const { apiKey: other } = await api.account('pro');
    const created = await create(100);
    const path = uploadPathOf(created);
    expect((await offsetOf(path, other)).status).toBe(404);
    const patch = await tusPatch(api.app, other, path, 0, Buffer.alloc(10));
    expect(patch.status).toBe(404);
    expect((await request(api.app).delete(path).set(bearer(other)).set(TUS)).status).toBe(404);
    expect((await request(api.app).delete(path).set(bearer(key)).set(TUS)).status).toBe(204);
    expect(
      (await request(api.app).post('/v1/media/uploads').set(TUS).set('Upload-Length', '10')).status,
    ).toBe(401);
  });

  it('checks the quota and the cap at creation, and the type when the last byte arrives', async () => {
    const { apiKey: free } = await api.account('free');
    const tooBig = await create(600 * 1024 * 1024, free);
    expect(tooBig.status).toBe(413);
    // Quota: a free account that already keeps 1.9 GB of its 2 GB may not start a 200 MB upload.
    const { apiKey: nearlyFull, accountId } = await api.account('free');
    await keepBytes(api, accountId, 1900 * MB);
    const overQuota = await create(200 * 1024 * 1024, nearlyFull);
    expect(overQuota.status).toBe(413);
    expect(JSON.parse(overQuota.text)).toMatchObject({ code: 'payload_too_large' });
    const deferred = await request(api.app)
      .post('/v1/media/uploads')
      .set(bearer(key))
      .set(TUS)
      .set('Upload-Defer-Length', '1');
    expect(deferred.status).toBe(400);

    const text = Buffer.from('this is a text file, not a picture or a video at all');
    const created = await create(text.length);
    const done = await tusPatch(api.app, key, uploadPathOf(created), 0, text);
    expect(done.status).toBe(415);
    expect(JSON.parse(done.text)).toMatchObject({
      code: 'unsupported_media_type',
      details: { field: 'file' },
    });
  });
});
