import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { FIRST_COMMENT_SEGMENT, fakeMp4, type TPlatform } from '@sps/core';
import type { TRunningSim } from '@sps/network-sim';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from '../../api/test/harness.js';
import { startPublisherProcess, type TPublisherProcess, waitUntil } from './support.js';

// The real publisher process killed (SIGKILL) while a post's first comment is out and its answer is not
// back, then restarted: the comment is read back (X, Threads, Instagram, LinkedIn, Facebook, YouTube) or resent
// under its idempotency key or record key (Mastodon, Bluesky), and reaches each network exactly once, under
// the post it belongs to.

/** The call that creates a post, and so a reply (the first comment), per network. */
const CREATE_PATH: Partial<Record<TPlatform, string>> = {
  twitter: '/2/tweets',
  mastodon: '/api/v1/statuses',
  // Threads makes a container, then publishes it: the publish call is the one that creates the post.
  threads: '/threads_publish',
  bluesky: '/xrpc/com.atproto.repo.createRecord',
};
const REPLIES = Object.keys(CREATE_PATH) as TPlatform[];
/** Networks whose comment is its own call (`…/comments`, YouTube's `…/commentThreads`) under the main post. */
const COMMENTS: TPlatform[] = ['instagram', 'linkedin', 'facebook', 'youtube'];
const NETWORKS: TPlatform[] = [...REPLIES, ...COMMENTS];

describe('publisher killed between the post and its first comment', () => {
  let api: TTestApi;
  let sim: TRunningSim;
  const processes: TPublisherProcess[] = [];
  // YouTube's main post is an upload: the publisher process fetches the video from this loopback server.
  let media: Server;
  let mediaBase = '';

  beforeAll(async () => {
    api = await startTestApi({ sim: true });
    sim = api.sim!;
    const video = Buffer.from(fakeMp4(3, 4_096, { width: 1280, height: 720 }));
    media = createServer((_req, res) => res.writeHead(200, { 'content-type': 'video/mp4' }).end(video));
    await new Promise<void>((resolve) => media.listen(0, '127.0.0.1', resolve));
    mediaBase = `http://127.0.0.1:${(media.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop(2_000)));
    await new Promise((resolve) => media.close(resolve));
    await api.close();
  });

  const start = (extra: Record<string, string> = {}) => {
    const p = startPublisherProcess(api, sim, extra);
    processes.push(p);
    return p;
  };
  const commentsOn = (platform: TPlatform, text: string) =>
    sim.sim.postsOf(platform).filter((p) => p.text === text);

  it('lands the comment once on each network after a restart', async () => {
    const { apiKey, accountId } = await api.account('pro');
    for (const platform of NETWORKS) await api.connect(accountId, platform);
    // Instagram's, LinkedIn's, Facebook's and YouTube's comment has its own call: only it is held.
    for (const platform of COMMENTS) {
      const path = platform === 'youtube' ? '/commentThreads' : '/comments';
      sim.sim.addFault({ platform, kind: 'hang_after_create', remaining: 1, pathIncludes: path });
    }
    for (const platform of REPLIES) {
      const path = CREATE_PATH[platform] ?? '';
      // The post goes through (a 1 ms wait takes the first create call); the comment is created and its
      // answer never comes, so the process is killed with the comment's row `sending`.
      sim.sim.addFault({ platform, kind: 'slow', delayMs: 1, remaining: 1, pathIncludes: path });
      sim.sim.addFault({ platform, kind: 'hang_after_create', remaining: 1, pathIncludes: path });
    }
    // A held comment stays `sending` for one network timeout, then is read back and recorded. All eight must
    // be `sending` at once when the process is killed, so the first process waits 10 s (a loaded CI box
    // spread the eight comments over more than the 2 s the harness uses); its claims then lapse 20 s after
    // their last renewal, which the restarted process waits out before it reads the network back.
    const first = start({ NETWORK_TIMEOUT: '10s' });
    const text = `kill-comment-${Math.random().toString(36).slice(2, 8)}`;
    const bodies = [
      { platforms: REPLIES },
      {
        platforms: ['instagram'],
        media: { images: [{ url: 'https://cdn.example.com/1.jpg' }], video: null },
      },
      { platforms: ['linkedin', 'facebook'] },
      { platforms: ['youtube'], media: { images: [], video: { url: `${mediaBase}/clip.mp4` } } },
    ];
    const ids: string[] = [];
    for (const body of bodies) {
      const created = await request(api.app)
        .post('/v1/posts')
        .set(bearer(apiKey))
        .send({ ...body, content: `${text} main`, first_comment: text });
      expect(created.status).toBe(201);
      const id = created.body.id as string;
      expect((await request(api.app).post(`/v1/posts/${id}/publish`).set(bearer(apiKey))).status).toBe(200);
      ids.push(id);
    }
    const statusOf = async (id: string) =>
      (await request(api.app).get(`/v1/posts/${id}`).set(bearer(apiKey))).body.status as string;
    const commentRows = () =>
      api.db.segmentDelivery.findMany({
        where: { postId: { in: ids }, segmentIndex: FIRST_COMMENT_SEGMENT },
      });

    // What the wait saw last, so a timeout says which network was missing or already resolved.
    let seen = '';
    await waitUntil(
      'each first comment to be created while its answer is held',
      async () => {
        const rows = await commentRows();
        seen = NETWORKS.map(
          (p) =>
            `${p}: row ${rows.find((r) => r.platform === p)?.status ?? 'none'}, ${commentsOn(p, text).length} comment(s)`,
        ).join('; ');
        return (
          rows.length === NETWORKS.length &&
          rows.every((r) => r.status === 'sending') &&
          NETWORKS.every((p) => commentsOn(p, text).length === 1)
        );
      },
      60_000,
      20,
    ).catch((err: Error) => {
      throw new Error(`${err.message} (last seen: ${seen})`);
    });
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    for (const id of ids) expect(await statusOf(id)).toBe('publishing');

    start();
    await waitUntil(
      'the posts to be published after the restart',
      async () => (await Promise.all(ids.map(statusOf))).every((s) => s === 'published'),
      90_000,
      100,
    );
    const results: Record<string, { first_comment?: unknown }> = {};
    for (const id of ids) {
      const done = await request(api.app).get(`/v1/posts/${id}`).set(bearer(apiKey));
      Object.assign(results, done.body.platform_results);
    }
    const rows = await commentRows();
    for (const platform of NETWORKS) {
      const comments = commentsOn(platform, text);
      const main = sim.sim.postsOf(platform).find((p) => p.text === `${text} main`);
      expect({ platform, count: comments.length, parent: comments[0]?.replyTo }).toEqual({
        platform,
        count: 1,
        parent: main?.remoteId,
      });
      expect(rows.find((r) => r.platform === platform)?.status).toBe('sent');
      expect(results[platform]?.first_comment).toEqual({
        success: true,
        post_id: comments[0]?.remoteId,
        post_url: expect.any(String),
      });
    }
  }, 240_000);
});
