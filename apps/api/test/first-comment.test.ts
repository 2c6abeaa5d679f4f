import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { fakeMp4, type TPlatform } from '@sps/core';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';
import { mcpClients } from './mcp-helpers.js';
import { createB, getA, settleB, simPosts, uniqueMarker } from './pipeline-helpers.js';

const COMMENTS: TPlatform[] = ['linkedin', 'facebook', 'instagram', 'youtube'];
const REPLIES: TPlatform[] = ['twitter', 'threads', 'bluesky', 'mastodon'];

interface TCommentResult {
  success: boolean;
  post_id?: string;
  post_url?: string;
  error?: string;
}
type TResults = Record<string, { success: boolean; post_id?: string; first_comment?: TCommentResult }>;

describe('first comment (first_comment / firstComment)', () => {
  let api: TTestApi;
  let key: string;
  let accountId: string;
  let clips: Server;
  let clipUrl: string;
  let server: Server;
  let mcpUrl: URL;
  const mcp = mcpClients(() => mcpUrl);

  beforeAll(async () => {
    const clip = Buffer.from(fakeMp4(12, 2048));
    clips = createServer((_req, res) => res.writeHead(200, { 'content-type': 'video/mp4' }).end(clip));
    await new Promise<void>((resolve) => clips.listen(0, '127.0.0.1', resolve));
    clipUrl = `http://127.0.0.1:${(clips.address() as AddressInfo).port}/clip.mp4`;
    api = await startTestApi({ publisher: true });
    ({ apiKey: key, accountId } = await api.account('pro'));
    for (const p of [...COMMENTS, ...REPLIES, 'tiktok', 'discord'] as const) await api.connect(accountId, p);
    server = await new Promise((resolve) => {
      const s = api.app.listen(0, '127.0.0.1', () => resolve(s));
    });
    mcpUrl = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
  });
  afterAll(async () => {
    await mcp.closeAll();
    await new Promise((r) => server.close(r));
    await new Promise((resolve) => clips.close(resolve));
    await api.close();
  });

  describe('validation (400 naming the field)', () => {
    it('B: refuses networks without comments or replies, and a comment over LinkedIn limit', async () => {
      const unsupported = await request(api.app)
        .post('/v1/posts')
        .set(bearer(key))
        .send({ content: 'hi', platforms: ['twitter', 'discord'], first_comment: 'first!' });
      expect(unsupported.status).toBe(400);
      expect(unsupported.body.details.field).toBe('first_comment');
      expect(unsupported.body.error).toContain('discord');

      const long = await request(api.app)
        .post('/v1/posts')
        .set(bearer(key))
        .send({ content: 'hi', platforms: ['linkedin'], first_comment: 'x'.repeat(1251) });
      expect(long.status).toBe(400);
      expect(long.body.details.field).toBe('first_comment');
      expect(long.body.error).toContain('1250');

      const tooLongReply = await request(api.app)
        .post('/v1/posts')
        .set(bearer(key))
        .send({ content: 'hi', platforms: ['bluesky'], first_comment: 'y'.repeat(301) });
      expect(tooLongReply.status).toBe(400);
      expect(tooLongReply.body.details.field).toBe('first_comment');

      // An update checks the post as it will be: adding tiktok to a post with a first comment is refused.
      const ok = await createB(api, key, {
        content: 'hi',
        platforms: ['linkedin'],
        first_comment: 'x'.repeat(1250),
      });
      expect((ok as unknown as { first_comment: string }).first_comment).toHaveLength(1250);
      const update = await request(api.app)
        .put(`/v1/posts/${ok.id}`)
        .set(bearer(key))
        .send({ platforms: ['linkedin', 'tiktok'] });
      expect(update.status).toBe(400);
      expect(update.body.details.field).toBe('first_comment');
      const cleared = await request(api.app)
        .put(`/v1/posts/${ok.id}`)
        .set(bearer(key))
        .send({ platforms: ['linkedin', 'tiktok'], first_comment: null });
      expect(cleared.status).toBe(200);
      expect(cleared.body.first_comment).toBeUndefined();
    });

    it('A: refuses a firstComment over LinkedIn comment limit, naming firstComment', async () => {
      const res = await request(api.app)
        .post('/api/posts')
        .set('x-api-key', key)
        .send({ content: 'hi', platforms: ['linkedin'], firstComment: 'z'.repeat(1251) });
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body)).toContain('firstComment');
      const ok = await request(api.app)
        .post('/api/posts')
        .set('x-api-key', key)
        .send({ content: 'hi', platforms: ['linkedin', 'twitter'], firstComment: 'see the link' });
      expect(ok.status).toBe(201);
      expect(ok.body.post.firstComment).toBe('see the link');
    });
  });

  it('MCP create_post and update_post take first_comment with the same checks', async () => {
    const c = await mcp.client(key);
    const made = await mcp.call(c, 'create_post', {
      content: 'from an agent',
      platforms: ['mastodon'],
      first_comment: 'more in the replies',
    });
    expect(made.isError).toBeFalsy();
    expect(made.structuredContent?.first_comment).toBe('more in the replies');
    const refused = await mcp.call(c, 'update_post', {
      id: made.structuredContent?.id,
      platforms: ['mastodon', 'telegram'],
    });
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.content)).toContain('first_comment');
    const long = await mcp.call(c, 'update_post', {
      id: made.structuredContent?.id,
      first_comment: 'm'.repeat(501),
    });
    expect(long.isError).toBe(true);
    expect(JSON.stringify(long.content)).toContain('first_comment');
  });

  it('lands once on each of the 8 networks after the post, with the right parent', async () => {
    const m = uniqueMarker('fc');
    // Each network with the media it needs: YouTube a video, Instagram an image, the others text.
    const bodies = [
      { platforms: ['youtube'], media: { images: [], video: { url: clipUrl } } },
      {
        platforms: ['instagram'],
        media: { images: [{ url: 'https://cdn.example.com/1.jpg' }], video: null },
      },
      { platforms: ['linkedin', 'facebook', ...REPLIES] },
    ];
    const ids: string[] = [];
    for (const body of bodies) {
      const post = await createB(api, key, { ...body, content: `${m} main`, first_comment: `${m} comment` });
      expect((await request(api.app).post(`/v1/posts/${post.id}/publish`).set(bearer(key))).status).toBe(200);
      ids.push(post.id);
    }
    const results: TResults = {};
    for (const id of ids) {
      const done = await settleB(api, key, id, 20_000);
      expect(done.status).toBe('published');
      Object.assign(results, done.platform_results);
    }
    for (const platform of [...COMMENTS, ...REPLIES]) {
      const posts = simPosts(api, platform, m);
      const comment = posts.filter((p) => p.text.includes(`${m} comment`));
      const main = posts.find((p) => p.text.includes(`${m} main`));
      expect({ platform, comments: comment.length }).toEqual({ platform, comments: 1 });
      expect({ platform, parent: comment[0]?.replyTo }).toEqual({ platform, parent: main?.remoteId });
      expect(results[platform]?.first_comment).toEqual({
        success: true,
        post_id: comment[0]?.remoteId,
        post_url: expect.any(String),
      });
    }
    const a = await getA(api, key, ids[2] ?? '');
    const twitter = a.platformPostIds?.twitter as { firstComment?: { id: string } } | undefined;
    expect(twitter?.firstComment?.id).toBe(simPosts(api, 'twitter', `${m} comment`)[0]?.remoteId);
  });

  it('replies to the last segment of a thread (X), and comments under the main post (LinkedIn)', async () => {
    const m = uniqueMarker('fct');
    const post = await createB(api, key, {
      content: `${m} one`,
      platforms: ['twitter', 'linkedin'],
      segments: [{ content: `${m} two` }],
      first_comment: `${m} comment`,
    });
    expect((await request(api.app).post(`/v1/posts/${post.id}/publish`).set(bearer(key))).status).toBe(200);
    const done = await settleB(api, key, post.id, 10_000);
    expect(done.status).toBe('published');
    const x = simPosts(api, 'twitter', m);
    expect(x.find((p) => p.text.includes('comment'))?.replyTo).toBe(
      x.find((p) => p.text.includes('two'))?.remoteId,
    );
    const li = simPosts(api, 'linkedin', m);
    const liComment = li.find((p) => p.text.includes('comment'));
    expect(liComment?.replyTo).toBe(li.find((p) => p.text.includes('one'))?.remoteId);
  });

  it("reports the comment's refusal without failing the post, and retries a transient failure once", async () => {
    const m = uniqueMarker('fcf');
    api.sim?.sim.addFault({
      platform: 'instagram',
      kind: 'rejected',
      remaining: 1,
      pathIncludes: '/comments',
    });
    const refused = await createB(api, key, {
      content: `${m} refused`,
      platforms: ['instagram'],
      media: { images: [{ url: 'https://cdn.example.com/1.jpg' }], video: null },
      first_comment: `${m} c1`,
    });
    expect((await request(api.app).post(`/v1/posts/${refused.id}/publish`).set(bearer(key))).status).toBe(
      200,
    );
    const done = await settleB(api, key, refused.id, 10_000);
    expect(done.status).toBe('published');
    const result = (done.platform_results as unknown as TResults).instagram;
    expect(result?.success).toBe(true);
    expect(result?.first_comment).toEqual({ success: false, error: expect.stringContaining('published') });
    expect(simPosts(api, 'instagram', `${m} c1`)).toHaveLength(0);

    api.sim?.sim.addFault({
      platform: 'instagram',
      kind: 'server_error',
      remaining: 1,
      pathIncludes: '/comments',
    });
    const retried = await createB(api, key, {
      content: `${m} retried`,
      platforms: ['instagram'],
      media: { images: [{ url: 'https://cdn.example.com/1.jpg' }], video: null },
      first_comment: `${m} c2`,
    });
    expect((await request(api.app).post(`/v1/posts/${retried.id}/publish`).set(bearer(key))).status).toBe(
      200,
    );
    const after = await settleB(api, key, retried.id, 15_000);
    expect(after.status).toBe('published');
    expect((after.platform_results as unknown as TResults).instagram?.first_comment?.success).toBe(true);
    expect(simPosts(api, 'instagram', `${m} c2`)).toHaveLength(1);
    expect(simPosts(api, 'instagram', `${m} retried`)).toHaveLength(1);
  }, 60_000);
});
