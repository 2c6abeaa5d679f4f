import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { fakeMp4, secretBox, type TPlatform } from '@sps/core';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';
import {
  createB,
  settleB,
  simPosts,
  type TErrorB,
  type TPostA,
  type TPostB,
  uniqueMarker,
} from './pipeline-helpers.js';

const REPLY_CHAIN: TPlatform[] = ['twitter', 'bluesky', 'mastodon', 'threads'];
const SEQUENTIAL: TPlatform[] = ['facebook', 'linkedin', 'slack', 'discord', 'telegram'];

describe('thread (segment) delivery per network group', () => {
  let api: TTestApi;
  let key: string;
  let accountId: string;
  // TikTok takes videos as uploaded bytes (FILE_UPLOAD), so they come from a loopback host here.
  let clips: Server;
  let clipBase: string;

  beforeAll(async () => {
    const clip = Buffer.from(fakeMp4(12, 2048));
    clips = createServer((_req, res) => res.writeHead(200, { 'content-type': 'video/mp4' }).end(clip));
    await new Promise<void>((resolve) => clips.listen(0, '127.0.0.1', resolve));
    clipBase = `http://127.0.0.1:${(clips.address() as AddressInfo).port}`;
    api = await startTestApi({ publisher: true });
    ({ apiKey: key, accountId } = await api.account('pro'));
    for (const p of [...REPLY_CHAIN, ...SEQUENTIAL, 'instagram', 'tiktok'] as const)
      await api.connect(accountId, p);
    // Bot API tokens look like `<bot id>:<secret>`; the simulator refuses anything else.
    await api.db.socialAccount.updateMany({
      where: { accountId, platform: 'telegram' },
      data: {
        credentialsEncrypted: secretBox.sealV1(
          JSON.stringify({ token: '123456:sim-bot-token' }),
          api.env.encryptionKey,
        ),
      },
    });
  });
  afterAll(async () => {
    await new Promise((resolve) => clips.close(resolve));
    await api.close();
  });

  async function publishB(body: object): Promise<TPostB> {
    const post = await createB(api, key, body);
    const res = await request(api.app).post(`/v1/posts/${post.id}/publish`).set(bearer(key));
    expect(res.status).toBe(200);
    return settleB(api, key, post.id, 10_000);
  }

  it('sends a native reply chain to twitter, bluesky, mastodon and threads (each segment replies to the previous)', async () => {
    const m = uniqueMarker('chain');
    const done = await publishB({
      content: `${m} one`,
      platforms: REPLY_CHAIN,
      segments: [{ content: `${m} two` }, { content: `${m} three` }],
    });
    expect(done.status).toBe('published');
    for (const platform of REPLY_CHAIN) {
      const posts = simPosts(api, platform, m);
      expect(posts.map((p) => p.text)).toEqual([`${m} one`, `${m} two`, `${m} three`]);
      expect(posts.map((p) => p.replyTo)).toEqual([null, posts[0]?.remoteId, posts[1]?.remoteId]);
      // The result points at the head of the thread. A segment whose answer came after the harness's 2 s
      // network timeout (Threads' two calls on a loaded CI box) is found by reading the network back, and the
      // result says so; the texts above show nothing was sent twice.
      const result = done.platform_results?.[platform];
      expect(result).toEqual({
        success: true,
        post_id: posts[0]?.remoteId,
        post_url: expect.any(String),
        ...(result?.resolved_by === undefined ? {} : { resolved_by: 'readback' }),
      });
    }
  });

  it('sends sequential numbered posts with (X/Y) and no replies to facebook, linkedin, slack, discord, telegram', async () => {
    const m = uniqueMarker('seq');
    const done = await publishB({
      content: `${m} one`,
      platforms: SEQUENTIAL,
      segments: [{ content: `${m} two` }, { content: `${m} three` }],
    });
    expect(done.status).toBe('published');
    for (const platform of SEQUENTIAL) {
      const posts = simPosts(api, platform, m);
      // LinkedIn's commentary is "little text": reserved characters such as parentheses arrive escaped.
      const texts = posts.map((p) => (platform === 'linkedin' ? p.text.replace(/\\([()])/g, '$1') : p.text));
      expect({ platform, texts }).toEqual({
        platform,
        texts: [`${m} one (1/3)`, `${m} two (2/3)`, `${m} three (3/3)`],
      });
      expect(posts.map((p) => p.replyTo)).toEqual([null, null, null]);
      expect(done.platform_results?.[platform]?.success).toBe(true);
    }
  });

  it('sends instagram threads as sequential numbered posts, each with its media', async () => {
    const m = uniqueMarker('ig');
    const done = await publishB({
      content: `${m} one`,
      platforms: ['instagram'],
      media: { images: [{ url: 'https://cdn.example.com/1.jpg' }] },
      segments: [{ content: `${m} two`, media_urls: ['https://cdn.example.com/2.jpg'] }],
    });
    expect(done.status).toBe('published');
    const posts = simPosts(api, 'instagram', m);
    expect(posts.map((p) => p.text)).toEqual([`${m} one (1/2)`, `${m} two (2/2)`]);
    expect(posts.map((p) => p.replyTo)).toEqual([null, null]);
  });

  it('sends tiktok threads as sequential posts with an (X/Y) suffix', async () => {
    const m = uniqueMarker('tt');
    const done = await publishB({
      content: `${m} one`,
      platforms: ['tiktok'],
      media: { images: [], video: { url: `${clipBase}/clip1.mp4` } },
      segments: [
        { content: `${m} two`, media_urls: [`${clipBase}/clip2.mp4`] },
        { content: `${m} three`, media_urls: [`${clipBase}/clip3.mp4`] },
      ],
    });
    expect(done.status).toBe('published');
    const posts = simPosts(api, 'tiktok', m);
    expect(posts.map((p) => p.text)).toEqual([`${m} one (1/3)`, `${m} two (2/3)`, `${m} three (3/3)`]);
    // Each video reached TikTok as its bytes (FILE_UPLOAD), not as a URL to pull.
    expect(posts.map((p) => p.media)).toEqual(
      [1, 2, 3].map(() => ({
        video: expect.objectContaining({ bytes: 2048, privacy: 'PUBLIC_TO_EVERYONE' }),
      })),
    );
  });

  it('refuses (422) a thread whose segments lack the media a network needs, before sending anything', async () => {
    const m = uniqueMarker('tt-nomedia');
    const post = await createB(api, key, {
      content: `${m} one`,
      platforms: ['tiktok'],
      media: { images: [], video: { url: 'https://cdn.example.com/clip1.mp4' } },
      segments: [{ content: `${m} two` }],
    });
    const res = await request(api.app).post(`/v1/posts/${post.id}/publish`).set(bearer(key));
    expect(res.status).toBe(422);
    const body = res.body as TErrorB;
    expect(body.code).toBe('media_not_supported');
    expect(body.details.field).toBe('segments.0.media_urls');
    expect(simPosts(api, 'tiktok', m)).toHaveLength(0);
  });

  it('counts the (X/Y) suffix in the sequential networks limits', async () => {
    // Discord allows 2000 characters; 1995 plus " (1/2)" is 2001.
    const post = await createB(api, key, {
      content: 'e'.repeat(1995),
      platforms: ['discord'],
      segments: [{ content: 'tail' }],
    });
    const res = await request(api.app).post(`/v1/posts/${post.id}/publish`).set(bearer(key));
    expect(res.status).toBe(422);
    expect((res.body as TErrorB).code).toBe('content_too_long');
  });

  it('keeps a thread as one post in lists (B and A) and one publish job', async () => {
    const other = await api.account('pro');
    await api.connect(other.accountId, 'twitter');
    const m = uniqueMarker('one');
    const created = await createB(api, other.apiKey, {
      content: `${m} a`,
      platforms: ['twitter'],
      segments: [{ content: `${m} b` }, { content: `${m} c` }],
    });
    const listB = (await request(api.app).get('/v1/posts').set(bearer(other.apiKey))).body as {
      posts: TPostB[];
      total: number;
    };
    expect(listB.total).toBe(1);
    expect(listB.posts[0]?.segments).toEqual([
      { content: `${m} b`, media_urls: [] },
      { content: `${m} c`, media_urls: [] },
    ]);
    expect(
      (await request(api.app).post(`/v1/posts/${created.id}/publish`).set(bearer(other.apiKey))).status,
    ).toBe(200);
    const done = await settleB(api, other.apiKey, created.id);
    expect(done.status).toBe('published');
    const jobs = await api.queues.publish.getJobs(['completed', 'active', 'wait', 'delayed', 'failed']);
    expect(
      jobs.filter((j) => (j.data as { postId?: string }).postId === created.id).map((j) => j.id),
    ).toEqual([`publish-${created.id}-1`]);
    const listA = (await request(api.app).get('/api/posts').set('x-api-key', other.apiKey)).body as {
      posts: TPostA[];
    };
    expect(listA.posts.map((p) => p.id)).toEqual([created.id]);
    expect(simPosts(api, 'twitter', m)).toHaveLength(3);
  });

  it('publishes Variant A segments as a reply chain and answers with one result per network', async () => {
    const m = uniqueMarker('a-thread');
    const res = await request(api.app)
      .post('/api/posts')
      .set('x-api-key', key)
      .send({
        content: `${m} one`,
        platforms: ['mastodon', 'threads'],
        segments: [{ content: `${m} two` }],
        published: true,
      });
    expect(res.status).toBe(201);
    expect((res.body as { publishResults: unknown[] }).publishResults).toEqual([
      { platform: 'mastodon', success: true, postUrl: expect.any(String) },
      { platform: 'threads', success: true, postUrl: expect.any(String) },
    ]);
    for (const p of ['mastodon', 'threads'] as const) {
      const posts = simPosts(api, p, m);
      expect(posts.map((x) => x.replyTo)).toEqual([null, posts[0]?.remoteId]);
    }
  });
});
