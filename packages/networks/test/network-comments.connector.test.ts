import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { startNetworkSim, type TRunningSim } from '@sps/network-sim';
import type { TConnectorAccount, TPublishInput } from '../src/connector.js';
import { createInstagramConnector } from '../src/instagram.connector.js';
import { guardPermissions } from '../src/permissions/permission-guard.js';
import { createYoutubeConnector } from '../src/youtube.connector.js';

// A post's first comment on the networks whose comments are not thread segments: Instagram
// (`POST /{ig-media-id}/comments`) and YouTube (`commentThreads.insert`), against the simulator.

const ig: TConnectorAccount = {
  id: 'acc-ig',
  platform: 'instagram',
  accountName: 'sps.gallery',
  externalId: '17841400000000001',
  instanceUrl: null,
  token: 'ig-token',
};
const yt: TConnectorAccount = {
  id: 'acc-yt',
  platform: 'youtube',
  accountName: 'SPS Channel',
  externalId: 'UCsim',
  instanceUrl: null,
  token: 'yt-token',
};

const comment = (account: TConnectorAccount, text: string, parent: string): TPublishInput => ({
  account,
  text,
  media: null,
  replyTo: { remoteId: parent },
  root: { remoteId: parent },
  idempotencyKey: `k-${text}`,
});

let running: TRunningSim;
beforeAll(async () => {
  running = await startNetworkSim();
});
afterAll(() => running.close());
beforeEach(() => running.sim.reset());

describe('Instagram first comment', () => {
  const connector = () => createInstagramConnector({ baseUrl: running.baseUrls.instagram, timeoutMs: 2000 });

  it('comments under the media and records it as a comment; refuses unknown media and a text over 2,200', async () => {
    const post = await connector().publish({
      account: ig,
      text: 'sunset',
      media: { images: [{ url: 'https://cdn.example/a.jpg' }], video: null },
      replyTo: null,
      root: null,
      idempotencyKey: 'k-post',
    });
    if (!post.ok) throw new Error(post.failure.message);
    const made = await connector().publish(comment(ig, 'first!', post.remoteId));
    if (!made.ok) throw new Error(made.failure.message);
    expect(made.meta).toEqual({ kind: 'comment', parent: post.remoteId });
    expect(made.url).toMatch(/^https:\/\/www\.instagram\.com\/p\//);
    expect(running.sim.getPost('instagram', made.remoteId)).toMatchObject({
      text: 'first!',
      replyTo: post.remoteId,
    });
    const unknown = await connector().publish(comment(ig, 'lost', '999'));
    expect(unknown).toMatchObject({ ok: false, failure: { kind: 'rejected' } });
    const long = await connector().publish(comment(ig, 'x'.repeat(2201), post.remoteId));
    expect(long).toMatchObject({ ok: false, failure: { kind: 'rejected' } });
  });

  it('needs instagram_business_manage_comments: refused before sending when the grant lacks it', async () => {
    const guarded = guardPermissions(connector());
    const outcome = await guarded.publish(
      comment(
        { ...ig, permissions: ['instagram_business_basic', 'instagram_business_content_publish'] },
        'hi',
        '1',
      ),
    );
    expect(outcome).toMatchObject({
      ok: false,
      failure: { kind: 'rejected', message: expect.stringContaining('instagram_business_manage_comments') },
    });
    expect(running.sim.requests).toHaveLength(0);
  });

  it('reads a comment back from the media comments (found, or absent)', async () => {
    const post = await connector().publish({
      account: ig,
      text: 'dawn',
      media: { images: [{ url: 'https://cdn.example/a.jpg' }], video: null },
      replyTo: null,
      root: null,
      idempotencyKey: 'k-dawn',
    });
    if (!post.ok) throw new Error(post.failure.message);
    const made = await connector().publish(comment(ig, 'said once', post.remoteId));
    if (!made.ok) throw new Error(made.failure.message);
    const probe = (text: string) => ({
      account: ig,
      text,
      replyTo: { remoteId: post.remoteId },
      root: { remoteId: post.remoteId },
      mediaCount: 0,
      idempotencyKey: 'k',
      since: new Date(Date.now() - 60_000),
      until: new Date(Date.now() + 1000),
      claimed: async () => new Set<string>(),
    });
    expect(await connector().findPublished?.(probe('said once'))).toEqual({
      kind: 'found',
      remoteId: made.remoteId,
      url: 'https://www.instagram.com/sps.gallery/',
      meta: { kind: 'comment', parent: post.remoteId },
    });
    expect(await connector().findPublished?.(probe('never said'))).toEqual({ kind: 'absent' });
  });
});

describe('YouTube first comment', () => {
  const connector = () => createYoutubeConnector({ baseUrl: running.baseUrls.youtube, timeoutMs: 2000 });
  const video = () =>
    running.sim.addPost({
      platform: 'youtube',
      remoteId: 'vid-1',
      text: 'a video',
      replyTo: null,
      media: null,
      idempotencyKey: null,
    });

  it('inserts a top-level comment thread on the video, and deletes it as a comment', async () => {
    video();
    const made = await connector().publish(comment(yt, 'first!', 'vid-1'));
    if (!made.ok) throw new Error(made.failure.message);
    const [call] = running.sim.requests.filter((r) =>
      r.path.startsWith('/youtube/youtube/v3/commentThreads'),
    );
    expect(call?.path).toBe('/youtube/youtube/v3/commentThreads?part=snippet');
    expect(call?.body).toEqual({
      snippet: {
        channelId: 'UCsim',
        videoId: 'vid-1',
        topLevelComment: { snippet: { textOriginal: 'first!' } },
      },
    });
    expect(made.url).toBe(`https://www.youtube.com/watch?v=vid-1&lc=${made.remoteId}`);
    expect(running.sim.getPost('youtube', made.remoteId)).toMatchObject({ replyTo: 'vid-1', text: 'first!' });
    expect(
      await connector().delete?.(yt, { remoteId: made.remoteId, ...(made.meta ? { meta: made.meta } : {}) }),
    ).toEqual({
      ok: true,
    });
    expect(running.sim.getPost('youtube', made.remoteId)?.deleted).toBe(true);
    expect(running.sim.getPost('youtube', 'vid-1')?.deleted).toBe(false);
  });

  it('refuses a comment on an unknown video and one over 10,000 characters', async () => {
    video();
    expect(await connector().publish(comment(yt, 'lost', 'nope'))).toMatchObject({ ok: false });
    expect(await connector().publish(comment(yt, 'y'.repeat(10_001), 'vid-1'))).toMatchObject({
      ok: false,
      failure: { kind: 'rejected' },
    });
  });
});
