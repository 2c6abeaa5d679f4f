import { randomBytes } from 'node:crypto';
import { request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { fakeMp4 } from '@sps/core';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';

const TUS = { 'Tus-Resumable': '1.0.0' };
const b64 = (text: string) => Buffer.from(text).toString('base64');

describe('tus 1.0 resumable uploads (/v1/media/uploads)', () => {
  let api: TTestApi;
  let server: Server;
  let port: number;
  let key: string;

  beforeAll(async () => {
    api = await startTestApi();
    ({ apiKey: key } = await api.account('pro'));
    server = api.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await api.close();
  });

  const create = (
    length: number,
    apiKey = key,
    metadata = `filename ${b64('clip.mp4')},alt_text ${b64('a clip')}`,
  ) =>
    request(api.app)
      .post('/v1/media/uploads')
      .set(bearer(apiKey))
      .set(TUS)
      .set('Upload-Length', String(length))
      .set('Upload-Metadata', metadata);
  const pathOf = (location: string) => new URL(location).pathname;
  const offsetOf = async (path: string, apiKey = key) => {
    const head = await request(api.app).head(path).set(bearer(apiKey)).set(TUS);
    return { status: head.status, offset: Number(head.headers['upload-offset']) };
  };

  /** Sends `bytes` as a PATCH body over a real socket and cuts the connection after `cutAfter` bytes. */
  const patchThenDrop = (path: string, bytes: Buffer, cutAfter: number) =>
    new Promise<void>((resolve) => {
      const req = httpRequest({
        host: '127.0.0.1',
        port,
        path,
        method: 'PATCH',
        headers: {
          ...TUS,
          authorization: `Bearer ${key}`,
          'Upload-Offset': '0',
          'Content-Type': 'application/offset+octet-stream',
          'Content-Length': String(bytes.length),
        },
      });
      req.on('error', () => resolve());
      req.on('close', () => resolve());
      req.write(bytes.subarray(0, cutAfter), () => {
        // Give the server the first part, then drop the connection as a failing network would.
        setImmediate(() => req.destroy());
      });
    });

  it('resumes after a dropped connection and creates the item on the last byte (Media-Id)', async () => {
    const video = Buffer.concat([Buffer.from(fakeMp4(7, 64)), randomBytes(3 * 1024 * 1024)]);
    const created = await create(video.length);
    expect(created.status).toBe(201);
    const path = pathOf(created.headers.location as string);
    expect(path).toMatch(/^\/v1\/media\/uploads\/[0-9a-f]{64}$/);

    await patchThenDrop(path, video, 1024 * 1024);
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

    const rest = await request(api.app)
      .patch(path)
      .set(bearer(key))
      .set(TUS)
      .set('Upload-Offset', String(offset))
      .set('Content-Type', 'application/offset+octet-stream')
      .send(video.subarray(offset));
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
    const path = pathOf(created.headers.location as string);
    expect((await offsetOf(path, other)).status).toBe(404);
    const patch = await request(api.app)
      .patch(path)
      .set(bearer(other))
      .set(TUS)
      .set('Upload-Offset', '0')
      .set('Content-Type', 'application/offset+octet-stream')
      .send(Buffer.alloc(10));
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
    await api.db.media.create({
      data: {
        accountId,
        storageKey: 'media/00/placeholder',
        type: 'video',
        mimeType: 'video/mp4',
        sizeBytes: BigInt(1900 * 1024 ** 2),
        etag: '"x"',
      },
    });
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
    const done = await request(api.app)
      .patch(pathOf(created.headers.location as string))
      .set(bearer(key))
      .set(TUS)
      .set('Upload-Offset', '0')
      .set('Content-Type', 'application/offset+octet-stream')
      .send(text);
    expect(done.status).toBe(415);
    expect(JSON.parse(done.text)).toMatchObject({
      code: 'unsupported_media_type',
      details: { field: 'file' },
    });
  });
});
