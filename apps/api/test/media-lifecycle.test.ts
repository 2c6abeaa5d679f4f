import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mediaStorageKey } from '@sps/core';
import sharp from 'sharp';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';

const DAY = 24 * 60 * 60 * 1000;

describe('media lifecycle: retention sweep and deleted accounts', () => {
  let api: TTestApi;
  let image: Buffer;

  beforeAll(async () => {
    api = await startTestApi({ publisher: true });
    image = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#abc' } })
      .png()
      .toBuffer();
  });
  afterAll(() => api.close());

  const upload = async (apiKey: string) => {
    const res = await request(api.app).post('/v1/media').set(bearer(apiKey)).attach('file', image, 'a.png');
    expect(res.status).toBe(201);
    return res.body as { id: string; url: string };
  };
  const stored = async (id: string) => (await api.storage.stat(mediaStorageKey(id))) !== null;
  /** Makes an item look uploaded `days` ago. */
  const age = (id: string, days: number) =>
    api.db
      .$executeRaw`UPDATE media SET created_at = now() - make_interval(days => ${days}) WHERE id = ${id}::uuid`;

  it('removes items no post uses after MEDIA_RETENTION (30 days), keeps used and recent ones', async () => {
    const { apiKey } = await api.account('pro');
    const unused = await upload(apiKey);
    const used = await upload(apiKey);
    const recent = await upload(apiKey);
    const post = await request(api.app)
      .post('/v1/posts')
      .set(bearer(apiKey))
      .send({ content: 'keeps its image', platforms: ['twitter'], media: { images: [{ url: used.url }] } });
    expect(post.status).toBe(201);
    await age(unused.id, 31);
    await age(used.id, 31);
    await age(recent.id, 29);

    const { removed } = await api.publisher!.sweepMediaNow();
    expect(removed).toBeGreaterThanOrEqual(1);
    expect((await request(api.app).get(`/v1/media/${unused.id}`).set(bearer(apiKey))).status).toBe(404);
    expect(await stored(unused.id)).toBe(false);
    for (const kept of [used, recent]) {
      expect((await request(api.app).get(`/v1/media/${kept.id}`).set(bearer(apiKey))).status).toBe(200);
      expect(await stored(kept.id)).toBe(true);
    }
    // A use counts as the item's last use: once the post is gone, retention runs from that use.
    expect((await request(api.app).delete(`/v1/posts/${post.body.id}`).set(bearer(apiKey))).status).toBe(204);
    await api.publisher!.sweepMediaNow();
    expect(await stored(used.id)).toBe(true);
    await api.publisher!.sweepMediaNow(new Date(Date.now() + 31 * DAY));
    expect(await stored(used.id)).toBe(false);
  });

  it("deleting an account's data stops its URLs at once and the sweep removes its bytes", async () => {
    const { apiKey, accountId } = await api.account('pro');
    const item = await upload(apiKey);
    const path = new URL(item.url).pathname;
    expect((await request(api.app).get(path)).status).toBe(200);
    await api.db.$executeRaw`DELETE FROM accounts WHERE id = ${accountId}::uuid`;
    expect((await request(api.app).get(path)).status).toBe(404);
    expect(await stored(item.id)).toBe(true);
    await api.publisher!.sweepMediaNow();
    expect(await stored(item.id)).toBe(false);
    expect(await api.db.media.count({ where: { id: item.id } })).toBe(0);
  });
});
