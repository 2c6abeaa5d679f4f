import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { fakeMp4 } from '@sps/core';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';
import { createB, settleB, simPosts, uniqueMarker } from './pipeline-helpers.js';

// Remote work that spans calls (a YouTube upload session, a TikTok publish id) is saved on the segment's
// row in PostgreSQL, so a retried publish job resumes it instead of uploading or posting a second time.

describe('resumable publishes across job retries', () => {
  let api: TTestApi;
  let key: string;
  let clips: Server;
  let clipUrl: string;

  beforeAll(async () => {
    api = await startTestApi({ publisher: true });
    const account = await api.account('pro');
    key = account.apiKey;
    await api.connect(account.accountId, 'youtube');
    await api.connect(account.accountId, 'tiktok');
    const clip = Buffer.from(fakeMp4(8, 4096));
    clips = createServer((_req, res) => res.writeHead(200, { 'content-type': 'video/mp4' }).end(clip));
    await new Promise<void>((resolve) => clips.listen(0, '127.0.0.1', resolve));
    clipUrl = `http://127.0.0.1:${(clips.address() as AddressInfo).port}/clip.mp4`;
  });
  afterAll(async () => {
    await new Promise((resolve) => clips.close(resolve));
    await api.close();
  });

  const requests = (platform: string, method: string, part: string) =>
    (api.sim?.sim.requests ?? []).filter(
      (r) => r.platform === platform && r.method === method && r.path.includes(part),
    );

  it('resumes a YouTube upload session on the next job attempt: one session, one video', async () => {
    const m = uniqueMarker('yt-resume');
    // The upload and the status query both fail in the first attempt: the session is kept for the retry.
    api.sim?.sim.addFault({
      platform: 'youtube',
      kind: 'server_error',
      remaining: 2,
      pathIncludes: 'upload_id',
    });
    const sessionsBefore = requests('youtube', 'POST', 'uploadType=resumable').length;
    const post = await createB(api, key, {
      content: `${m} launch`,
      platforms: ['youtube'],
      media: { images: [], video: { url: clipUrl } },
    });
    expect((await request(api.app).post(`/v1/posts/${post.id}/publish`).set(bearer(key))).status).toBe(200);
    const done = await settleB(api, key, post.id, 15_000);
    expect(done.status).toBe('published');
    expect(requests('youtube', 'POST', 'uploadType=resumable').length - sessionsBefore).toBe(1);
    expect(simPosts(api, 'youtube', m)).toHaveLength(1);
  });

  it('polls the same TikTok publish on the next job attempt when status/fetch fails: one post', async () => {
    const m = uniqueMarker('tt-resume');
    api.sim?.sim.addFault({
      platform: 'tiktok',
      kind: 'server_error',
      remaining: 1,
      pathIncludes: 'status/fetch',
    });
    const initsBefore = requests('tiktok', 'POST', '/video/init/').length;
    const post = await createB(api, key, {
      content: `${m} dance`,
      platforms: ['tiktok'],
      media: { images: [], video: { url: clipUrl } },
    });
    expect((await request(api.app).post(`/v1/posts/${post.id}/publish`).set(bearer(key))).status).toBe(200);
    const done = await settleB(api, key, post.id, 15_000);
    expect(done.status).toBe('published');
    expect(requests('tiktok', 'POST', '/video/init/').length - initsBefore).toBe(1);
    expect(simPosts(api, 'tiktok', m)).toHaveLength(1);
  });
});
