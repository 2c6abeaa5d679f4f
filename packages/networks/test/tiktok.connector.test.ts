import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { startNetworkSim, TIKTOK_SIM_PRIVATE_TOKEN, type TRunningSim } from '@sps/network-sim';
import type {
  TConnectorAccount,
  TMedia,
  TNetworkConnector,
  TPublishInput,
  TPublishProgress,
} from '../src/connector.js';
import { createMediaFetcher } from '../src/media-fetch.js';
import { createTiktokConnector } from '../src/tiktok.connector.js';
import { mp4, startMediaServer, type TMediaServer } from './media-server.js';

const account: TConnectorAccount = {
  id: 'acc-tt',
  platform: 'tiktok',
  accountName: '@sps_clips',
  externalId: null,
  instanceUrl: null,
  token: 'tt-token',
};
const MB = 1024 * 1024;
const VERIFIED = 'https://media.verified.example';

let running: TRunningSim;
let media: TMediaServer;
let connector: TNetworkConnector;
let video: TMedia;

/** Keeps what the connector saves, as the publisher does on the segment's row. */
function memoryProgress(saved: Record<string, string> | null = null) {
  const store = {
    saved,
    saves: [] as (Record<string, string> | null)[],
    save: async (state: Record<string, string> | null) => {
      store.saves.push(state);
      store.saved = state;
    },
  };
  return store satisfies TPublishProgress;
}

/**
 * Calls again while TikTok is still processing, as the publisher does from a delayed job (the connector
 * answers `pending` with its progress saved instead of waiting in the call).
 */
async function publishToEnd(c: TNetworkConnector, args: TPublishInput) {
  for (;;) {
    const outcome = await c.publish(args);
    if (outcome.ok || !outcome.pending) return outcome;
    await new Promise((r) => setTimeout(r, 5));
  }
}

function input(text: string, m: TMedia | null = video, extra: Partial<TPublishInput> = {}): TPublishInput {
  return { account, text, media: m, replyTo: null, root: null, idempotencyKey: `k-${text}`, ...extra };
}

function make(timeoutMs = 5000) {
  return createTiktokConnector({
    baseUrl: running.baseUrls.tiktok,
    timeoutMs,
    fetchMedia: createMediaFetcher({ allowPrivate: true }),
    processingWait: { intervalMs: 5, maxWaitMs: 200 },
  });
}

beforeAll(async () => {
  running = await startNetworkSim();
  media = await startMediaServer();
  media.set('/clip.mp4', 'video/mp4', mp4(30, 4096));
  media.set('/long.mp4', 'video/mp4', mp4(90, 4096));
  // An MP4 container TikTok cannot decode: no movie header.
  media.set(
    '/broken.mp4',
    'video/mp4',
    Buffer.from('0000001866747970697336d0000002006973366d69736f32', 'hex'),
  );
  connector = make();
  video = { images: [], video: { url: media.url('/clip.mp4') } };
});
afterAll(async () => {
  await media.close();
  await running.close();
});
beforeEach(() => running.sim.reset());

const paths = () => running.sim.requests.map((r) => r.path.replace(/__upload\/.*/, '__upload'));
const request = (part: string) => running.sim.requests.find((r) => r.path.includes(part));

describe('TikTok connector: video by FILE_UPLOAD', () => {
  it('queries the creator, uploads the bytes, and succeeds only once status/fetch says PUBLISH_COMPLETE', async () => {
    const progress = memoryProgress();
    const outcome = await publishToEnd(connector, input('dance #fyp', video, { progress }));
    if (!outcome.ok) throw new Error(outcome.failure.message);
    // Still processing at the first check: the call ends (pending) and the next one resumes the publish id.
    expect(paths()).toEqual([
      '/tiktok/v2/post/publish/creator_info/query/',
      '/tiktok/v2/post/publish/video/init/',
      '/tiktok/__upload',
      '/tiktok/v2/post/publish/status/fetch/',
      '/tiktok/v2/post/publish/creator_info/query/',
      '/tiktok/v2/post/publish/status/fetch/',
    ]);
    expect(request('/video/init/')?.body).toEqual({
      post_info: {
        title: 'dance #fyp',
        privacy_level: 'PUBLIC_TO_EVERYONE',
        disable_comment: false,
        disable_duet: false,
        disable_stitch: true,
      },
      source_info: { source: 'FILE_UPLOAD', video_size: 4096, chunk_size: 4096, total_chunk_count: 1 },
    });
    const upload = request('/__upload/');
    expect(upload?.method).toBe('PUT');
    expect(upload?.headers['content-range']).toBe('bytes 0-4095/4096');
    expect(upload?.headers['content-type']).toBe('video/mp4');
    // The public post id is a 19-digit int64, read exactly.
    expect(outcome.remoteId).toMatch(/^73\d{17}$/);
    expect(outcome.url).toBe(`https://www.tiktok.com/@sim_creator/video/${outcome.remoteId}`);
    expect(outcome.meta?.publishId).toMatch(/^v_pub_file~/);
    expect(running.sim.postsOf('tiktok')[0]).toMatchObject({
      text: 'dance #fyp',
      media: { video: { bytes: 4096 } },
    });
    // The third save records when the status checks began: the wait's deadline outlives the call.
    expect(progress.saves.map((s) => s?.stage)).toEqual(['init', 'uploaded', 'uploaded']);
    expect(progress.saves[2]?.waitSince).toMatch(/^\d+$/);
  });

  it('sends a 25 MB video in ordered chunks with Content-Range headers, the last chunk taking the remainder', async () => {
    media.set('/big.mp4', 'video/mp4', mp4(20, 25 * MB));
    const outcome = await connector.publish(
      input('big', { images: [], video: { url: media.url('/big.mp4') } }),
    );
    if (!outcome.ok) throw new Error(outcome.failure.message);
    expect(request('/video/init/')?.body).toMatchObject({
      source_info: { video_size: 25 * MB, chunk_size: 10 * MB, total_chunk_count: 2 },
    });
    const ranges = running.sim.requests
      .filter((r) => r.path.includes('__upload'))
      .map((r) => r.headers['content-range']);
    expect(ranges).toEqual([
      `bytes 0-${10 * MB - 1}/${25 * MB}`,
      `bytes ${10 * MB}-${25 * MB - 1}/${25 * MB}`,
    ]);
  });

  it('posts with the only privacy level a private creator offers and refuses a video longer than the creator may post', async () => {
    const restricted = { ...account, token: TIKTOK_SIM_PRIVATE_TOKEN };
    const ok = await connector.publish({ ...input('private'), account: restricted });
    if (!ok.ok) throw new Error(ok.failure.message);
    expect(request('/video/init/')?.body).toMatchObject({ post_info: { privacy_level: 'SELF_ONLY' } });
    // A private post never gets a public id: the publish id and the profile stand for it.
    expect(ok.remoteId).toMatch(/^v_pub_file~/);
    expect(ok.url).toBe('https://www.tiktok.com/@sim_creator');

    running.sim.reset();
    const long = await connector.publish({
      ...input('too long', { images: [], video: { url: media.url('/long.mp4') } }),
      account: restricted,
    });
    expect(long.ok ? null : long.failure).toMatchObject({ kind: 'rejected' });
    expect(long.ok ? '' : long.failure.message).toMatch(/90 s long.*up to 60 s/);
    expect(paths()).toEqual(['/tiktok/v2/post/publish/creator_info/query/']);
  });

  it('reports a FAILED publish as a failed result with TikTok fail_reason and clears the saved progress', async () => {
    const progress = memoryProgress();
    const outcome = await connector.publish(
      input('broken', { images: [], video: { url: media.url('/broken.mp4') } }, { progress }),
    );
    expect(outcome.ok ? null : outcome.failure.kind).toBe('rejected');
    expect(outcome.ok ? '' : outcome.failure.message).toContain('file_format_check_failed');
    expect(progress.saved).toBeNull();
    expect(running.sim.postsOf('tiktok')).toHaveLength(0);
  });

  it('keeps waiting across attempts: a publish still processing is transient, and the retry polls the same publish id', async () => {
    const impatient = createTiktokConnector({
      baseUrl: running.baseUrls.tiktok,
      fetchMedia: createMediaFetcher({ allowPrivate: true }),
      processingWait: { intervalMs: 5, maxWaitMs: 0 },
    });
    const progress = memoryProgress();
    const first = await impatient.publish(input('slow', video, { progress }));
    expect(first.ok ? null : first.failure).toMatchObject({ kind: 'transient' });
    expect(first.ok ? null : first.failure.outcomeUnknown).toBeUndefined();
    expect(progress.saved).toMatchObject({ stage: 'uploaded' });

    const second = await connector.publish(input('slow', video, { progress }));
    if (!second.ok) throw new Error(second.failure.message);
    expect(second.meta?.publishId).toBe(progress.saved?.publishId);
    expect(running.sim.requests.filter((r) => r.path.includes('/init/'))).toHaveLength(1);
    expect(running.sim.postsOf('tiktok')).toHaveLength(1);
  });

  it('starts over when the saved publish never received all its bytes', async () => {
    // An upload cut off after init: the simulator holds a publish with nothing uploaded.
    const progress = memoryProgress();
    running.sim.addFault({
      platform: 'tiktok',
      kind: 'server_error',
      remaining: 1,
      pathIncludes: '__upload',
    });
    const cut = await connector.publish(input('cut', video, { progress }));
    expect(cut.ok ? null : cut.failure.kind).toBe('transient');
    expect(progress.saved).toMatchObject({ stage: 'init', videoSize: '4096' });

    const retried = await publishToEnd(connector, input('cut', video, { progress }));
    if (!retried.ok) throw new Error(retried.failure.message);
    expect(running.sim.requests.filter((r) => r.path.includes('/video/init/'))).toHaveLength(2);
    expect(running.sim.postsOf('tiktok')).toHaveLength(1);
  });
});

describe('TikTok connector: photos, text, failures', () => {
  it('posts photos pulled from a verified domain, with a short title and the full description', async () => {
    const photos: TMedia = {
      images: [{ url: `${VERIFIED}/a.jpg` }, { url: `${VERIFIED}/b.webp` }],
      video: null,
    };
    const text = `${'A'.repeat(120)}\nsecond line`;
    const outcome = await connector.publish(input(text, photos));
    if (!outcome.ok) throw new Error(outcome.failure.message);
    expect(request('/content/init/')?.body).toMatchObject({
      post_info: { title: 'A'.repeat(90), description: text, privacy_level: 'PUBLIC_TO_EVERYONE' },
      source_info: {
        source: 'PULL_FROM_URL',
        photo_cover_index: 0,
        photo_images: [`${VERIFIED}/a.jpg`, `${VERIFIED}/b.webp`],
      },
      post_mode: 'DIRECT_POST',
      media_type: 'PHOTO',
    });
    expect(request('/status/fetch/')).toBeDefined();
  });

  it('fails photos from an unverified domain with TikTok url_ownership_unverified', async () => {
    const outcome = await connector.publish(
      input('unverified', { images: [{ url: 'https://cdn.example/a.jpg' }], video: null }),
    );
    expect(outcome.ok ? null : outcome.failure).toMatchObject({ kind: 'rejected', status: 403 });
    expect(outcome.ok ? '' : outcome.failure.body).toContain('url_ownership_unverified');
  });

  it('refuses a caption over 2200 UTF-16 units before calling TikTok (an emoji counts two)', async () => {
    const outcome = await connector.publish(input('😀'.repeat(1101)));
    expect(outcome.ok ? null : outcome.failure.kind).toBe('rejected');
    expect(running.sim.requests).toHaveLength(0);
    const fits = await connector.publish(input('😀'.repeat(1100)));
    expect(fits.ok).toBe(true);
  });

  it('prefers the video when a post has both a video and images', async () => {
    const outcome = await connector.publish(
      input('both', { images: [{ url: `${VERIFIED}/a.jpg` }], video: video.video }),
    );
    expect(outcome.ok).toBe(true);
    expect(request('/init/')?.path).toContain('/video/init/');
  });

  it('rejects a post without a video or photos before calling TikTok', async () => {
    for (const m of [null, { images: [], video: null }]) {
      const outcome = await connector.publish(input('words only', m));
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

  it('maps 429 to rate_limited with the retry delay, 5xx to transient and 400 to rejected', async () => {
    running.sim.addFault({
      platform: 'tiktok',
      kind: 'rate_limited',
      remaining: 1,
      retryAfterSeconds: 7,
      pathIncludes: '/init/',
    });
    const busy = await connector.publish(input('busy'));
    expect(busy.ok ? null : busy.failure).toMatchObject({ kind: 'rate_limited', retryAfterMs: 7000 });
    running.sim.addFault({ platform: 'tiktok', kind: 'server_error', remaining: 1, pathIncludes: '/init/' });
    const down = await connector.publish(input('down'));
    expect(down.ok ? null : down.failure).toMatchObject({ kind: 'transient', status: 500 });
    running.sim.addFault({ platform: 'tiktok', kind: 'rejected', remaining: 1, pathIncludes: '/init/' });
    const bad = await connector.publish(input('bad'));
    expect(bad.ok ? null : bad.failure).toMatchObject({ kind: 'rejected', status: 400 });
    expect(bad.ok ? null : bad.failure.body).toContain('invalid_params');
  });

  it('reports an init call that never answers as transient with outcome unknown, nothing saved', async () => {
    const progress = memoryProgress();
    running.sim.addFault({ platform: 'tiktok', kind: 'hang_after_create', remaining: 1 });
    const outcome = await make(300).publish(input('lost answer', video, { progress }));
    expect(outcome.ok ? null : outcome.failure).toMatchObject({ kind: 'transient', outcomeUnknown: true });
    expect(progress.saves).toEqual([]);
  });

  it('has no delete (the Content Posting API cannot delete posts)', () => {
    expect(connector.delete).toBeUndefined();
  });
});
