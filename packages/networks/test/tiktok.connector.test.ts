import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { startNetworkSim, type TRunningSim } from '@sps/network-sim';
import type { TConnectorAccount, TMedia, TNetworkConnector, TPublishInput } from '../src/connector.js';
import { createTiktokConnector } from '../src/tiktok.connector.js';

const account: TConnectorAccount = {
  id: 'acc-tt',
  platform: 'tiktok',
  accountName: '@sps_clips',
  externalId: null,
  instanceUrl: null,
  token: 'tt-token',
};
const video: TMedia = { images: [], video: { url: 'https://cdn.example/clip.mp4' } };

function input(text: string, media: TMedia | null = video): TPublishInput {
  return { account, text, media, replyTo: null, root: null, idempotencyKey: `k-${text}` };
}

let running: TRunningSim;
let connector: TNetworkConnector;

beforeAll(async () => {
  running = await startNetworkSim();
  connector = createTiktokConnector({ baseUrl: running.baseUrls.tiktok, timeoutMs: 2000 });
});
afterAll(() => running.close());
beforeEach(() => running.sim.reset());

const initRequest = () => running.sim.requests.find((r) => r.path.includes('/init/'));

describe('TikTok connector', () => {
  it('queries the creator, then direct-posts a video pulled from its URL', async () => {
    const outcome = await connector.publish(input('dance #fyp'));
    if (!outcome.ok) throw new Error(outcome.failure.message);
    expect(running.sim.requests.map((r) => r.path)).toEqual([
      '/tiktok/v2/post/publish/creator_info/query/',
      '/tiktok/v2/post/publish/video/init/',
    ]);
    const init = initRequest();
    expect(init?.headers.authorization).toBe('Bearer tt-token');
    expect(init?.body).toEqual({
      post_info: {
        title: 'dance #fyp',
        privacy_level: 'PUBLIC_TO_EVERYONE',
        disable_comment: false,
        disable_duet: false,
        disable_stitch: true,
      },
      source_info: { source: 'PULL_FROM_URL', video_url: 'https://cdn.example/clip.mp4' },
    });
    expect(outcome.remoteId).toMatch(/^v_pub_url~/);
    expect(outcome.url).toBe('https://www.tiktok.com/@sim_creator');
    expect(running.sim.getPost('tiktok', outcome.remoteId)?.text).toBe('dance #fyp');
  });

  it('posts photos through content/init with a short title and the full description', async () => {
    const media: TMedia = {
      images: [{ url: 'https://cdn.example/a.jpg' }, { url: 'https://cdn.example/b.jpg' }],
      video: null,
    };
    const text = `${'A'.repeat(120)}\nsecond line`;
    const outcome = await connector.publish(input(text, media));
    expect(outcome.ok).toBe(true);
    expect(initRequest()?.path).toBe('/tiktok/v2/post/publish/content/init/');
    expect(initRequest()?.body).toMatchObject({
      post_info: { title: 'A'.repeat(90), description: text, privacy_level: 'PUBLIC_TO_EVERYONE' },
      source_info: {
        source: 'PULL_FROM_URL',
        photo_cover_index: 0,
        photo_images: ['https://cdn.example/a.jpg', 'https://cdn.example/b.jpg'],
      },
      post_mode: 'DIRECT_POST',
      media_type: 'PHOTO',
    });
  });

  it('prefers the video when a post has both a video and images', async () => {
    const outcome = await connector.publish(
      input('both', { images: [{ url: 'https://cdn.example/a.jpg' }], video: video.video }),
    );
    expect(outcome.ok).toBe(true);
    expect(initRequest()?.path).toContain('/video/init/');
  });

  it('rejects a post without a video or photos before calling TikTok', async () => {
    for (const media of [null, { images: [], video: null }]) {
      const outcome = await connector.publish(input('words only', media));
      expect(outcome.ok ? null : outcome.failure.kind).toBe('rejected');
    }
    expect(running.sim.requests).toHaveLength(0);
  });

  it('maps access_token_invalid to auth_expired', async () => {
    running.sim.addFault({ platform: 'tiktok', kind: 'auth_expired', remaining: 1 });
    const outcome = await connector.publish(input('expired'));
    if (outcome.ok) throw new Error('expected failure');
    expect(outcome.failure).toMatchObject({ kind: 'auth_expired', status: 401 });
    expect(outcome.failure.message).toMatch(/Reconnect the TikTok account/);
  });

  it('maps 429 to rate_limited with the retry delay', async () => {
    running.sim.addFault({
      platform: 'tiktok',
      kind: 'rate_limited',
      remaining: 1,
      retryAfterSeconds: 7,
      pathIncludes: '/init/',
    });
    const outcome = await connector.publish(input('busy'));
    expect(outcome.ok ? null : outcome.failure).toMatchObject({ kind: 'rate_limited', retryAfterMs: 7000 });
  });

  it('maps 5xx to transient and 400 to rejected', async () => {
    running.sim.addFault({ platform: 'tiktok', kind: 'server_error', remaining: 1, pathIncludes: '/init/' });
    const down = await connector.publish(input('down'));
    expect(down.ok ? null : down.failure).toMatchObject({ kind: 'transient', status: 500 });
    running.sim.addFault({ platform: 'tiktok', kind: 'rejected', remaining: 1, pathIncludes: '/init/' });
    const bad = await connector.publish(input('bad'));
    expect(bad.ok ? null : bad.failure).toMatchObject({ kind: 'rejected', status: 400 });
    expect(bad.ok ? null : bad.failure.body).toContain('invalid_params');
  });

  it('reports an init call that never answers as transient with outcome unknown', async () => {
    const quick = createTiktokConnector({ baseUrl: running.baseUrls.tiktok, timeoutMs: 300 });
    running.sim.addFault({ platform: 'tiktok', kind: 'hang_after_create', remaining: 1 });
    const outcome = await quick.publish(input('lost answer'));
    expect(outcome.ok ? null : outcome.failure).toMatchObject({ kind: 'transient', outcomeUnknown: true });
    expect(running.sim.postsOf('tiktok')).toHaveLength(1);
  });

  it('has no delete (the Content Posting API cannot delete posts)', () => {
    expect(connector.delete).toBeUndefined();
  });
});
