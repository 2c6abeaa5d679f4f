import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { fakeMp4, mediaStorageKey, sealCredentials } from '@sps/core';
import sharp from 'sharp';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';
import { createB, settleB, simPosts, uniqueMarker } from './pipeline-helpers.js';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

// An uploaded item's URL in a post: the publisher reads the bytes from the media store (the API here is
// not even listening on PUBLIC_URL, so an HTTP fetch could not succeed), and the simulator receives them.

describe('publishing uploaded media through the simulator', () => {
  let api: TTestApi;

  beforeAll(async () => {
    // Private URLs refused as in production: only the media store can provide the bytes.
    api = await startTestApi({
      publisher: true,
      mediaAllowPrivate: false,
      env: { PUBLIC_URL: 'http://127.0.0.1:9' },
    });
  });
  afterAll(() => api.close());

  const upload = async (apiKey: string, bytes: Buffer, name: string) => {
    const res = await request(api.app).post('/v1/media').set(bearer(apiKey)).attach('file', bytes, name);
    expect(res.status).toBe(201);
    return res.body as { id: string; url: string };
  };

  it('sends an uploaded photo and an uploaded video to Telegram byte for byte', async () => {
    const account = await api.account('pro');
    await api.connect(account.accountId, 'telegram');
    const photo = await sharp({ create: { width: 40, height: 30, channels: 3, background: '#123456' } })
      .jpeg()
      .toBuffer();
    const video = Buffer.from(fakeMp4(4, 50_000));
    const photoItem = await upload(account.apiKey, photo, 'p.jpg');
    const videoItem = await upload(account.apiKey, video, 'v.mp4');

    for (const [item, bytes, field, media] of [
      [photoItem, photo, 'photo', { images: [{ url: photoItem.url }] }],
      [videoItem, video, 'video', { video: { url: videoItem.url } }],
    ] as const) {
      const m = uniqueMarker('upl');
      const post = await createB(api, account.apiKey, {
        content: `uploaded ${m}`,
        platforms: ['telegram'],
        media,
      });
      const started = await request(api.app).post(`/v1/posts/${post.id}/publish`).set(bearer(account.apiKey));
      expect(started.status).toBe(200);
      const done = await settleB(api, account.apiKey, post.id, 15_000);
      expect(done.status).toBe('published');
      const [sent] = simPosts(api, 'telegram', m);
      expect(sent?.media).toEqual({
        [field]: expect.objectContaining({ bytes: bytes.length, sha256: sha256(bytes) }),
      });
      expect(item.url.startsWith('http://127.0.0.1:9/media/')).toBe(true);
    }
  });

  it('sends an uploaded video to Facebook byte for byte through a resumable upload session (spooled from the store)', async () => {
    const account = await api.account('pro');
    const id = await api.connect(account.accountId, 'facebook');
    // As a Page connected through Facebook Login keeps it: the user token the upload session needs.
    await api.db.socialAccount.update({
      where: { id },
      data: {
        credentialsEncrypted: sealCredentials(
          { token: 'token-facebook-user', extra: { userToken: 'user-token-facebook' } },
          api.env.encryptionKey,
          id,
        ),
      },
    });
    const video = Buffer.from(fakeMp4(5, 60_000));
    const item = await upload(account.apiKey, video, 'fb.mp4');
    const m = uniqueMarker('fbupl');
    const post = await createB(api, account.apiKey, {
      content: `uploaded ${m}`,
      platforms: ['facebook'],
      media: { video: { url: item.url } },
    });
    expect(
      (await request(api.app).post(`/v1/posts/${post.id}/publish`).set(bearer(account.apiKey))).status,
    ).toBe(200);
    const done = await settleB(api, account.apiKey, post.id, 15_000);
    expect(done.status).toBe('published');
    expect(simPosts(api, 'facebook', m)[0]?.media).toMatchObject({
      video: { length: video.length, sha256: sha256(video) },
    });
  });

  it('sends an uploaded image to Bluesky as a blob of the same size and type, with the alt text of the post', async () => {
    const account = await api.account('pro');
    await api.connect(account.accountId, 'bluesky');
    const png = await sharp({ create: { width: 50, height: 40, channels: 3, background: '#00ff00' } })
      .png()
      .toBuffer();
    const item = await upload(account.apiKey, png, 'g.png');
    const m = uniqueMarker('bsky');
    const post = await createB(api, account.apiKey, {
      content: `uploaded ${m}`,
      platforms: ['bluesky'],
      media: { images: [{ url: item.url, alt_text: 'green' }] },
    });
    expect(
      (await request(api.app).post(`/v1/posts/${post.id}/publish`).set(bearer(account.apiKey))).status,
    ).toBe(200);
    const done = await settleB(api, account.apiKey, post.id, 15_000);
    expect(done.status).toBe('published');
    const [sent] = simPosts(api, 'bluesky', m);
    const embed = sent?.media as { images: { alt: string; image: { size: number; mimeType: string } }[] };
    expect(embed.images).toEqual([
      {
        alt: 'green',
        aspectRatio: { width: 50, height: 40 },
        image: expect.objectContaining({ size: png.length, mimeType: 'image/png' }),
      },
    ]);
  });

  it('fails the network with a clear reason when the uploaded item was deleted after the post was made', async () => {
    const account = await api.account('pro');
    await api.connect(account.accountId, 'telegram');
    const photo = await sharp({ create: { width: 10, height: 10, channels: 3, background: '#fff' } })
      .png()
      .toBuffer();
    const item = await upload(account.apiKey, photo, 'p.png');
    // Removed behind the API's back (the API refuses to delete an item a pending post uses).
    await api.storage.delete(mediaStorageKey(item.id));
    const m = uniqueMarker('gone');
    const post = await createB(api, account.apiKey, {
      content: `gone ${m}`,
      platforms: ['telegram'],
      media: { images: [{ url: item.url }] },
    });
    await request(api.app).post(`/v1/posts/${post.id}/publish`).set(bearer(account.apiKey));
    const done = await settleB(api, account.apiKey, post.id, 15_000);
    expect(done.status).toBe('failed');
    expect(done.platform_results?.telegram).toEqual({
      success: false,
      error: expect.stringContaining('the uploaded media item no longer exists'),
    });
  });
});
