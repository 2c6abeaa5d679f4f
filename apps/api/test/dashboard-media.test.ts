import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { fakeMp4, hashPassword } from '@sps/core';
import { createOwnerRepository } from '@sps/db';
import sharp from 'sharp';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';

const PASSWORD = 'correct horse battery';
const TUS = { 'Tus-Resumable': '1.0.0' };
const b64 = (text: string) => Buffer.from(text).toString('base64');

/** An owner with a dashboard password, signed in: the agent keeps the session cookie. */
async function signedIn(api: TTestApi, plan: 'pro' | 'free' = 'pro') {
  const account = await api.account(plan);
  const row = await api.db.account.findUniqueOrThrow({ where: { id: account.accountId } });
  await createOwnerRepository(api.db).setPasswordHash(account.accountId, await hashPassword(PASSWORD));
  const agent = request.agent(api.app);
  const res = await agent.post('/dashboard/api/session').send({ email: row.ownerEmail, password: PASSWORD });
  expect(res.status).toBe(200);
  return { ...account, agent, csrf: res.body.csrf_token as string };
}

describe('dashboard media library (/dashboard/api/media, /dashboard/api/v1/media…)', () => {
  let api: TTestApi;
  let owner: Awaited<ReturnType<typeof signedIn>>;
  let other: Awaited<ReturnType<typeof signedIn>>;
  let image: Buffer;

  beforeAll(async () => {
    api = await startTestApi();
    owner = await signedIn(api);
    other = await signedIn(api);
    image = await sharp({ create: { width: 40, height: 30, channels: 3, background: '#c33' } })
      .jpeg()
      .toBuffer();
  });
  afterAll(() => api.close());

  const upload = (who = owner, alt = 'a red square') =>
    who.agent
      .post('/dashboard/api/v1/media')
      .set('x-csrf-token', who.csrf)
      .field('alt_text', alt)
      .attach('file', image, 'red.jpg');

  it('uploads by multipart behind the session, and refuses an upload without the CSRF token', async () => {
    const refused = await owner.agent.post('/dashboard/api/v1/media').attach('file', image, 'red.jpg');
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('forbidden');
    const created = await upload();
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ type: 'image', mime_type: 'image/jpeg', width: 40, height: 30 });
    const anonymous = await request(api.app).get('/dashboard/api/media');
    expect(anonymous.status).toBe(401);
  });

  it('lists the library with usage per item and the quota', async () => {
    const { id, url } = (await upload()).body as { id: string; url: string };
    const post = await owner.agent
      .post('/dashboard/api/v1/posts')
      .set('x-csrf-token', owner.csrf)
      .send({ content: 'uses it', platforms: ['twitter'], media: { images: [{ url, alt_text: 'red' }] } });
    expect(post.status).toBe(201);
    const list = await owner.agent.get('/dashboard/api/media');
    expect(list.status).toBe(200);
    const item = list.body.media.find((m: { id: string }) => m.id === id);
    expect(item).toMatchObject({ id, url, used_by: 1, pending_posts: 1 });
    expect(list.body.quota).toMatchObject({ quota_bytes: 250 * 1024 ** 3 });
    expect(list.body.quota.used_bytes).toBeGreaterThanOrEqual(image.length * 2);
    expect(list.body.total).toBe(list.body.media.length);
    // Named in a thread reply counts too; a deleted post does not.
    const reply = await owner.agent
      .post('/dashboard/api/v1/posts')
      .set('x-csrf-token', owner.csrf)
      .send({
        content: 'main',
        platforms: ['mastodon'],
        segments: [{ content: 'reply', media_urls: [url] }],
      });
    expect(reply.status).toBe(201);
    const usedOf = async () =>
      (await owner.agent.get('/dashboard/api/media')).body.media.find((m: { id: string }) => m.id === id);
    expect(await usedOf()).toMatchObject({ used_by: 2, pending_posts: 2 });
    await owner.agent.delete(`/dashboard/api/v1/posts/${post.body.id}`).set('x-csrf-token', owner.csrf);
    expect(await usedOf()).toMatchObject({ used_by: 1, pending_posts: 1 });
    // Nothing of another account shows, and their list has none of these.
    const theirs = await other.agent.get('/dashboard/api/media');
    expect(theirs.body.media).toEqual([]);
    expect(theirs.body.quota.used_bytes).toBe(0);
  });

  it('answers 404 for another account’s item (get and delete), 409 media_in_use while a post uses it', async () => {
    const { id, url } = (await upload()).body as { id: string; url: string };
    expect((await other.agent.get(`/dashboard/api/v1/media/${id}`)).status).toBe(404);
    const theirDelete = await other.agent
      .delete(`/dashboard/api/v1/media/${id}`)
      .set('x-csrf-token', other.csrf);
    expect(theirDelete.status).toBe(404);
    const post = await owner.agent
      .post('/dashboard/api/v1/posts')
      .set('x-csrf-token', owner.csrf)
      .send({ content: 'in use', platforms: ['mastodon'], media: { images: [{ url }] } });
    expect(post.status).toBe(201);
    const noCsrf = await owner.agent.delete(`/dashboard/api/v1/media/${id}`);
    expect(noCsrf.status).toBe(403);
    const inUse = await owner.agent.delete(`/dashboard/api/v1/media/${id}`).set('x-csrf-token', owner.csrf);
    expect(inUse.status).toBe(409);
    expect(inUse.body).toMatchObject({ code: 'media_in_use', details: { post_ids: [post.body.id] } });
    await owner.agent.delete(`/dashboard/api/v1/posts/${post.body.id}`).set('x-csrf-token', owner.csrf);
    const removed = await owner.agent.delete(`/dashboard/api/v1/media/${id}`).set('x-csrf-token', owner.csrf);
    expect(removed.status).toBe(204);
  });

  it('takes tus uploads behind the session: Location under /dashboard, CSRF on each change, owner only', async () => {
    const video = Buffer.concat([Buffer.from(fakeMp4(9, 64)), Buffer.alloc(200_000, 7)]);
    const create = (who: typeof owner, csrf: string | null) => {
      const req = who.agent
        .post('/dashboard/api/v1/media/uploads')
        .set(TUS)
        .set('Upload-Length', String(video.length))
        .set('Upload-Metadata', `filename ${b64('clip.mp4')},alt_text ${b64('a clip')}`);
      return csrf ? req.set('x-csrf-token', csrf) : req;
    };
    expect((await create(owner, null)).status).toBe(403);
    const created = await create(owner, owner.csrf);
    expect(created.status).toBe(201);
    // A path: the browser resolves it against the page's own origin.
    expect(created.headers.location).toMatch(/^\/dashboard\//);
    const location = new URL(created.headers.location as string, 'http://127.0.0.1');
    expect(location.pathname).toMatch(/^\/dashboard\/api\/v1\/media\/uploads\/[0-9a-f]{64}$/);
    const path = location.pathname;
    // Another account's session, and an API key (the cookie-less public route), do not reach it.
    expect((await other.agent.head(path).set(TUS)).status).toBe(404);
    const patch = (who: typeof owner, csrf: string | null, from: number, to: number) => {
      const req = who.agent
        .patch(path)
        .set(TUS)
        .set('Upload-Offset', String(from))
        .set('Content-Type', 'application/offset+octet-stream');
      return (csrf ? req.set('x-csrf-token', csrf) : req).send(video.subarray(from, to));
    };
    expect((await patch(owner, null, 0, 1000)).status).toBe(403);
    expect((await patch(other, other.csrf, 0, 1000)).status).toBe(404);
    const first = await patch(owner, owner.csrf, 0, 100_000);
    expect(first.status).toBe(204);
    const head = await owner.agent.head(path).set(TUS);
    expect(head.headers['upload-offset']).toBe('100000');
    const last = await patch(owner, owner.csrf, 100_000, video.length);
    expect(last.status).toBe(204);
    const mediaId = last.headers['media-id'] as string;
    expect(mediaId).toMatch(/^[0-9a-f-]{36}$/);
    const item = await owner.agent.get(`/dashboard/api/v1/media/${mediaId}`);
    expect(item.body).toMatchObject({
      type: 'video',
      size_bytes: video.length,
      alt_text: 'a clip',
      duration_s: 9,
    });
    // The same item through the public API, with the owner's key.
    expect((await request(api.app).get(`/v1/media/${mediaId}`).set(bearer(owner.apiKey))).status).toBe(200);
  });
});
