import { stat } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';
import { MB, paddedMp4, sha256, tusCreate, tusPatch, uploadPathOf } from './media-helpers.js';

// MEDIA_STORAGE=fs: the finished upload is hard-linked from MEDIA_DIR/tus-staging into place, not copied.

describe('tus final PATCH on the fs store', () => {
  let api: TTestApi;
  let key: string;

  beforeAll(async () => {
    api = await startTestApi();
    ({ apiKey: key } = await api.account('pro'));
  });
  afterAll(async () => {
    await api.close();
  });

  const patch = (path: string, offset: number, body: Buffer) => tusPatch(api.app, key, path, offset, body);

  it('moves the staged file into the store (same inode, staging name gone) and serves its bytes', async () => {
    const video = paddedMp4(9, 2 * MB + 123);
    const created = await tusCreate(api.app, key, video.length);
    expect(created.status).toBe(201);
    const path = uploadPathOf(created);
    const uploadId = path.split('/').pop()!;
    const half = MB;
    expect((await patch(path, 0, video.subarray(0, half))).status).toBe(204);
    const stagedPath = api.storage.localPath!(`tus-staging/${uploadId}`);
    const staged = await stat(stagedPath);
    expect(staged.size).toBe(half);

    const done = await patch(path, half, video.subarray(half));
    expect(done.status).toBe(204);
    const mediaId = done.headers['media-id'] as string;
    const row = await api.db.media.findUniqueOrThrow({ where: { id: mediaId } });
    const stored = await stat(api.storage.localPath!(row.storageKey));
    expect(stored.ino).toBe(staged.ino);
    expect(stored.size).toBe(video.length);
    await expect(stat(stagedPath)).rejects.toMatchObject({ code: 'ENOENT' });

    const item = await request(api.app).get(`/v1/media/${mediaId}`).set(bearer(key));
    expect(item.body).toMatchObject({ type: 'video', mime_type: 'video/mp4', size_bytes: video.length });
    expect(item.body.duration_s).toBe(9);
    const url = new URL(item.body.url).pathname;
    const whole = await request(api.app).get(url).buffer(true);
    expect(whole.status).toBe(200);
    expect(sha256(Buffer.from(whole.body))).toBe(sha256(video));
    const etag = whole.headers.etag as string;
    expect(etag).toBe(row.etag);
    const range = await request(api.app).get(url).set('Range', 'bytes=1000000-1999999').buffer(true);
    expect(range.status).toBe(206);
    expect(sha256(Buffer.from(range.body))).toBe(sha256(video.subarray(1_000_000, 2_000_000)));
    const again = await request(api.app).get(url).set('If-None-Match', etag);
    expect(again.status).toBe(304);
  });

  it('refuses a staged file that is no media (415): no item, staging removed', async () => {
    const text = Buffer.from('plain text, linked into place, read back by its head, then refused');
    const path = uploadPathOf(await tusCreate(api.app, key, text.length));
    const before = await api.db.media.count();
    const done = await patch(path, 0, text);
    expect(done.status).toBe(415);
    expect(await api.db.media.count()).toBe(before);
    await expect(stat(api.storage.localPath!(`tus-staging/${path.split('/').pop()}`))).rejects.toMatchObject({
      code: 'ENOENT',
    });
  });
});
