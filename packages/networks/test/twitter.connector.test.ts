import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { startNetworkSim, type TRunningSim } from '@sps/network-sim';
import sharp from 'sharp';
import type { TConnectorAccount, TNetworkConnector, TPublishInput } from '../src/connector.js';
import { createMediaFetcher, type TFetchMedia } from '../src/media-fetch.js';
import { createTwitterConnector } from '../src/twitter.connector.js';

const account: TConnectorAccount = {
  id: 'acc-x',
  platform: 'twitter',
  accountName: 'sps_test',
  externalId: '42',
  instanceUrl: null,
  token: 'x-token',
};

function input(text: string, extra: Partial<TPublishInput> = {}): TPublishInput {
  return { account, text, media: null, replyTo: null, root: null, idempotencyKey: `k-${text}`, ...extra };
}

let running: TRunningSim;
let connector: TNetworkConnector;
let images: Server;
let imageUrl: string;

beforeAll(async () => {
  running = await startNetworkSim();
  // The test image server listens on loopback, which the media fetcher refuses unless told otherwise.
  connector = createTwitterConnector({
    baseUrl: running.baseUrls.twitter,
    timeoutMs: 2000,
    fetchMedia: createMediaFetcher({ allowPrivate: true }),
  });
  images = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
  });
  await new Promise<void>((resolve) => images.listen(0, '127.0.0.1', resolve));
  imageUrl = `http://127.0.0.1:${(images.address() as AddressInfo).port}/cat.png`;
});
afterAll(async () => {
  await running.close();
  await new Promise((resolve) => images.close(resolve));
});
beforeEach(() => running.sim.reset());

describe('X connector', () => {
  it('posts a tweet with the bearer token and returns its id and URL', async () => {
    const outcome = await connector.publish(input('hello X'));
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    const request = running.sim.requests.find((r) => r.path.endsWith('/2/tweets'));
    expect(request?.method).toBe('POST');
    expect(request?.headers.authorization).toBe('Bearer x-token');
    expect(request?.body).toEqual({ text: 'hello X' });
    expect(outcome.url).toBe(`https://x.com/sps_test/status/${outcome.remoteId}`);
    expect(running.sim.getPost('twitter', outcome.remoteId)?.text).toBe('hello X');
  });

  it('chains replies, each to the previous tweet', async () => {
    const ids: string[] = [];
    let previous: { remoteId: string } | null = null;
    for (const text of ['one', 'two', 'three']) {
      const outcome = await connector.publish(input(text, { replyTo: previous }));
      if (!outcome.ok) throw new Error(outcome.failure.message);
      ids.push(outcome.remoteId);
      previous = { remoteId: outcome.remoteId };
    }
    const posts = ids.map((id) => running.sim.getPost('twitter', id));
    expect(posts.map((p) => p?.replyTo)).toEqual([null, ids[0], ids[1]]);
  });

  it('sends polls natively', async () => {
    await connector.publish(input('vote', { poll: { options: ['a', 'b'], durationMinutes: 60 } }));
    const request = running.sim.requests.find((r) => r.path.endsWith('/2/tweets'));
    expect(request?.body).toMatchObject({ poll: { options: ['a', 'b'], duration_minutes: 60 } });
  });

  it('downloads and uploads images, then attaches their media ids', async () => {
    const outcome = await connector.publish(
      input('pic', { media: { images: [{ url: imageUrl, altText: 'a cat' }], video: null } }),
    );
    expect(outcome.ok).toBe(true);
    const upload = running.sim.requests.find((r) => r.path.endsWith('/2/media/upload'));
    expect(upload?.body).toMatchObject({
      media: 'iVBORw==',
      media_category: 'tweet_image',
      media_type: 'image/png',
    });
    expect(running.sim.requests.some((r) => r.path.endsWith('/2/media/metadata'))).toBe(true);
    const tweet = running.sim.requests.find((r) => r.path.endsWith('/2/tweets'));
    expect((tweet?.body as { media?: { media_ids: string[] } } | undefined)?.media?.media_ids).toHaveLength(
      1,
    );
  });

  it('maps 401 to auth_expired with a reconnect hint', async () => {
    running.sim.addFault({ platform: 'twitter', kind: 'auth_expired', remaining: 1 });
    const outcome = await connector.publish(input('nope'));
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.failure.kind).toBe('auth_expired');
    expect(outcome.failure.message).toMatch(/Reconnect/);
    expect(outcome.failure.message).not.toContain('x-token');
  });

  it('maps 429 to rate_limited using x-rate-limit-reset', async () => {
    running.sim.addFault({ platform: 'twitter', kind: 'rate_limited', remaining: 1, retryAfterSeconds: 7 });
    const outcome = await connector.publish(input('later'));
    if (outcome.ok) throw new Error('expected failure');
    expect(outcome.failure.kind).toBe('rate_limited');
    expect(outcome.failure.retryAfterMs).toBeGreaterThan(5000);
    expect(outcome.failure.retryAfterMs).toBeLessThanOrEqual(7000);
  });

  it('maps 5xx to transient and 400 to rejected', async () => {
    running.sim.addFault({ platform: 'twitter', kind: 'server_error', remaining: 1 });
    const failed = await connector.publish(input('a'));
    expect(failed.ok ? null : failed.failure.kind).toBe('transient');
    running.sim.addFault({ platform: 'twitter', kind: 'rejected', remaining: 1 });
    const rejected = await connector.publish(input('b'));
    expect(rejected.ok ? null : rejected.failure).toMatchObject({ kind: 'rejected', status: 400 });
  });

  it('reports a timeout after the tweet was created as transient with an unknown outcome', async () => {
    const slow = createTwitterConnector({ baseUrl: running.baseUrls.twitter, timeoutMs: 300 });
    running.sim.addFault({ platform: 'twitter', kind: 'hang_after_create', remaining: 1 });
    const outcome = await slow.publish(input('maybe'));
    expect(outcome.ok ? null : outcome.failure).toMatchObject({ kind: 'transient', outcomeUnknown: true });
    expect(running.sim.postsOf('twitter')).toHaveLength(1);
  });

  it('a duplicate text is rejected with why; after an earlier send of the segment it is a cue to read back', async () => {
    expect((await connector.publish(input('said once'))).ok).toBe(true);
    const first = await connector.publish(input('said once'));
    expect(first).toEqual({
      ok: false,
      failure: {
        kind: 'rejected',
        status: 403,
        body: expect.stringContaining('duplicate content'),
        message: expect.stringContaining('refused this post as a duplicate'),
      },
    });
    const resend = await connector.publish(input('said once', { sentBefore: true }));
    expect(resend).toMatchObject({
      ok: false,
      failure: { kind: 'rejected', outcomeUnknown: true, duplicate: true, status: 403 },
    });
  });

  it('deletes a tweet, and treats an already deleted one as success', async () => {
    const outcome = await connector.publish(input('bye'));
    if (!outcome.ok) throw new Error(outcome.failure.message);
    expect(await connector.delete?.(account, { remoteId: outcome.remoteId })).toEqual({ ok: true });
    expect(running.sim.getPost('twitter', outcome.remoteId)?.deleted).toBe(true);
    expect(await connector.delete?.(account, { remoteId: outcome.remoteId })).toEqual({ ok: true });
  });
});

// Media as the shared fetcher hands it over (its own tests cover downloading); the connector's part is the
// upload to X. 4 MB + 1000 bytes of video makes two append segments.
const mp4 = (size: number, fill = 7) => {
  const bytes = Buffer.alloc(size, fill);
  bytes.write('\0\0\0\x18ftypisom', 0, 'latin1');
  return bytes;
};
const files = new Map<string, { bytes: Buffer; type: string }>([
  ['https://cdn.example/a.png', { bytes: Buffer.from('\x89PNG-one', 'latin1'), type: 'image/png' }],
  [
    'https://cdn.example/anim.gif',
    { bytes: Buffer.from('GIF89a-animated-frames', 'latin1'), type: 'image/gif' },
  ],
  ['https://cdn.example/clip.mp4', { bytes: mp4(4 * 1024 * 1024 + 1000), type: 'video/mp4' }],
  [
    'https://cdn.example/broken.mp4',
    { bytes: Buffer.concat([mp4(16), Buffer.from('fail-processing')]), type: 'video/mp4' },
  ],
]);
const stubFetch: TFetchMedia = async (request) => {
  const file = files.get(request.url);
  if (!file)
    return { ok: false, failure: { kind: 'rejected', message: `Could not download ${request.url}` } };
  return { ok: true, value: file };
};
const withMedia = (processingWait = { intervalMs: 5, maxWaitMs: 2000 }) =>
  createTwitterConnector({
    baseUrl: running.baseUrls.twitter,
    // 4 MB segments to a simulator in the same jest worker: under a loaded CI box one took over 2 s.
    timeoutMs: 15_000,
    fetchMedia: stubFetch,
    processingWait,
  });
const paths = () => running.sim.requests.map((r) => `${r.method} ${r.path.replace(/\d{10,}/g, ':id')}`);
const tweetBody = () =>
  running.sim.requests.find((r) => r.path.endsWith('/2/tweets'))?.body as
    | { media?: { media_ids: string[] } }
    | undefined;

describe('X connector media', () => {
  it('uploads an animated GIF through the chunked upload as tweet_gif, waits for processing, then tweets it', async () => {
    const outcome = await withMedia().publish(
      input('gif', {
        media: { images: [{ url: 'https://cdn.example/anim.gif', altText: 'dancing' }], video: null },
      }),
    );
    if (!outcome.ok) throw new Error(outcome.failure.message);
    expect(running.sim.requests[0]?.body).toEqual({
      media_type: 'image/gif',
      total_bytes: files.get('https://cdn.example/anim.gif')?.bytes.length,
      media_category: 'tweet_gif',
    });
    expect(paths()).toEqual([
      'POST /twitter/2/media/upload/initialize',
      'POST /twitter/2/media/upload/:id/append',
      'POST /twitter/2/media/upload/:id/finalize',
      // finalize says pending, STATUS in_progress, then succeeded: the Post comes only after that.
      'GET /twitter/2/media/upload?command=STATUS&media_id=:id',
      'GET /twitter/2/media/upload?command=STATUS&media_id=:id',
      'POST /twitter/2/media/metadata',
      'POST /twitter/2/tweets',
    ]);
    expect(tweetBody()?.media?.media_ids).toHaveLength(1);
  });

  it('uploads a video in 4 MB multipart segments as amplify_video and tweets it once processed', async () => {
    const outcome = await withMedia().publish(
      input('video', { media: { images: [], video: { url: 'https://cdn.example/clip.mp4' } } }),
    );
    if (!outcome.ok) throw new Error(outcome.failure.message);
    expect(running.sim.requests[0]?.body).toMatchObject({
      media_type: 'video/mp4',
      media_category: 'amplify_video',
    });
    const appends = await Promise.all(
      running.sim.requests
        .filter((r) => r.path.endsWith('/append'))
        .map((r) =>
          new Response(r.body as Buffer, {
            headers: { 'content-type': String(r.headers['content-type']) },
          }).formData(),
        ),
    );
    expect(appends.map((form) => form.get('segment_index'))).toEqual(['0', '1']);
    expect(appends.map((form) => (form.get('media') as Blob).size)).toEqual([4 * 1024 * 1024, 1000]);
    expect(tweetBody()?.media?.media_ids).toHaveLength(1);
    expect(running.sim.postsOf('twitter')).toHaveLength(1);
  });

  it('with kept progress, answers pending while X processes the video and tweets it on a later call, uploaded once', async () => {
    const progress = {
      saved: null as Record<string, string> | null,
      save: async (state: Record<string, string> | null) => {
        progress.saved = state;
      },
    };
    const connector = withMedia();
    const args = {
      ...input('resumed', { media: { images: [], video: { url: 'https://cdn.example/clip.mp4' } } }),
      progress,
    };
    let outcome = await connector.publish(args);
    // No sleep in the call: the media id and the wait's start are saved, the caller comes back later.
    expect(outcome.ok ? null : (outcome.pending ?? outcome.failure)).toEqual({ checkAfterMs: 5 });
    expect(progress.saved).toEqual({
      xMediaId: expect.any(String),
      xMediaUrl: 'https://cdn.example/clip.mp4',
      waitSince: expect.any(String),
    });
    expect(running.sim.postsOf('twitter')).toHaveLength(0);
    for (let calls = 1; !outcome.ok && outcome.pending && calls < 20; calls += 1) {
      outcome = await connector.publish(args);
    }
    if (!outcome.ok) throw new Error(outcome.failure.message);
    // Cleared before the Post call: an interrupted one is read back, never resumed into a second Post.
    expect(progress.saved).toBeNull();
    expect(running.sim.requests.filter((r) => r.path.endsWith('/initialize'))).toHaveLength(1);
    expect(running.sim.postsOf('twitter')).toHaveLength(1);
  });

  it('with kept progress, answers pending while X processes an animated GIF (held by the simulator) and tweets it on a later call, uploaded once', async () => {
    const hold = async (ms: number) => {
      const res = await fetch(`${running.url}/__sim/processing/twitter`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ms }),
      });
      expect(res.status).toBe(204);
    };
    await hold(60 * 60_000);
    const progress = {
      saved: null as Record<string, string> | null,
      save: async (state: Record<string, string> | null) => {
        progress.saved = state;
      },
    };
    const connector = withMedia();
    const gif = { url: 'https://cdn.example/anim.gif', altText: 'dancing' };
    const args = { ...input('gif-resumed', { media: { images: [gif], video: null } }), progress };
    // However many calls come while X holds the GIF in_progress, each is one STATUS read, never a sleep.
    for (let call = 0; call < 3; call += 1) {
      const outcome = await connector.publish(args);
      expect(outcome.ok ? null : (outcome.pending ?? outcome.failure)).toEqual({ checkAfterMs: 5 });
    }
    expect(progress.saved).toEqual({
      xMediaId: expect.any(String),
      xMediaUrl: gif.url,
      waitSince: expect.any(String),
    });
    expect(running.sim.postsOf('twitter')).toHaveLength(0);
    expect(running.sim.requests.filter((r) => r.path.endsWith('/2/media/metadata'))).toHaveLength(0);
    await hold(0);
    let outcome = await connector.publish(args);
    for (let calls = 1; !outcome.ok && outcome.pending && calls < 20; calls += 1) {
      outcome = await connector.publish(args);
    }
    if (!outcome.ok) throw new Error(outcome.failure.message);
    // Cleared before the Post call: an interrupted one is read back, never resumed into a second Post.
    expect(progress.saved).toBeNull();
    expect(running.sim.requests.filter((r) => r.path.endsWith('/initialize'))).toHaveLength(1);
    const described = running.sim.requests.filter((r) => r.path.endsWith('/2/media/metadata'));
    expect(described.map((r) => r.body)).toEqual([
      { id: tweetBody()?.media?.media_ids[0], metadata: { alt_text: { text: 'dancing' } } },
    ]);
    expect(running.sim.postsOf('twitter')).toHaveLength(1);
  });

  it("reports a video X failed to process as rejected with X's reason, and tweets nothing", async () => {
    const outcome = await withMedia().publish(
      input('broken', { media: { images: [], video: { url: 'https://cdn.example/broken.mp4' } } }),
    );
    expect(outcome.ok ? null : outcome.failure).toMatchObject({
      kind: 'rejected',
      message: expect.stringContaining('Unsupported video format'),
    });
    expect(running.sim.postsOf('twitter')).toHaveLength(0);
  });

  it('gives up waiting for processing as transient (retried later) without tweeting', async () => {
    const outcome = await withMedia({ intervalMs: 50, maxWaitMs: 0 }).publish(
      input('slow', { media: { images: [], video: { url: 'https://cdn.example/clip.mp4' } } }),
    );
    expect(outcome.ok ? null : outcome.failure).toMatchObject({ kind: 'transient' });
    expect(outcome.ok ? null : outcome.failure.outcomeUnknown).toBeUndefined();
    expect(running.sim.postsOf('twitter')).toHaveLength(0);
  });

  it('re-encodes an image over 5 MB to a JPEG within 5 MB before the simple upload', async () => {
    // Noise does not compress: a 1400x1400 RGB PNG of it is about 5.9 MB.
    const side = 1400;
    const png = await sharp(randomBytes(side * side * 3), { raw: { width: side, height: side, channels: 3 } })
      .png()
      .toBuffer();
    expect(png.length).toBeGreaterThan(5 * 1024 * 1024);
    files.set('https://cdn.example/big.png', { bytes: png, type: 'image/png' });
    const outcome = await withMedia().publish(
      input('big', { media: { images: [{ url: 'https://cdn.example/big.png' }], video: null } }),
    );
    if (!outcome.ok) throw new Error(outcome.failure.message);
    const upload = running.sim.requests.find((r) => r.path.endsWith('/2/media/upload'))?.body as {
      media: string;
      media_type: string;
    };
    expect(upload.media_type).toBe('image/jpeg');
    expect(Buffer.from(upload.media, 'base64').length).toBeLessThanOrEqual(5 * 1024 * 1024);
  });
});

describe('X simulator strictness', () => {
  const call = async (method: 'GET' | 'POST', path: string, body?: unknown) => {
    const res = await fetch(`${running.baseUrls.twitter}${path}`, {
      method,
      headers: { authorization: 'Bearer x-token', 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return {
      status: res.status,
      body: (await res.json()) as { data?: { id: string }; errors?: { message: string }[] },
    };
  };
  const initVideo = async (total: number) =>
    (
      await call('POST', '/2/media/upload/initialize', {
        media_type: 'video/mp4',
        total_bytes: total,
        media_category: 'amplify_video',
      })
    ).body.data?.id ?? '';
  const b64 = (n: number) => Buffer.alloc(n, 1).toString('base64');

  it("refuses a Post with an unknown media id in X's problem shape", async () => {
    const res = await call('POST', '/2/tweets', { text: 'x', media: { media_ids: ['123456789'] } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      title: 'Invalid Request',
      type: 'https://api.twitter.com/2/problems/invalid-request',
      errors: [{ message: 'Your media IDs are invalid.', parameters: { 'media.media_ids': ['123456789'] } }],
    });
    expect(running.sim.postsOf('twitter')).toHaveLength(0);
  });

  it('refuses appending beyond the declared total and finalizing before every byte arrived', async () => {
    const id = await initVideo(10);
    expect(
      (await call('POST', `/2/media/upload/${id}/append`, { media: b64(11), segment_index: 0 })).status,
    ).toBe(400);
    expect(
      (await call('POST', `/2/media/upload/${id}/append`, { media: b64(6), segment_index: 0 })).status,
    ).toBe(200);
    const early = await call('POST', `/2/media/upload/${id}/finalize`);
    expect(early.status).toBe(400);
    expect(early.body.errors?.[0]?.message).toBe('Segments do not add up to provided total file size.');
    expect(
      (await call('POST', '/2/media/upload/999/append', { media: b64(1), segment_index: 0 })).status,
    ).toBe(400);
  });

  it('refuses a Post whose video has not finished processing', async () => {
    const id = await initVideo(4);
    await call('POST', `/2/media/upload/${id}/append`, { media: b64(4), segment_index: 0 });
    const finalized = await call('POST', `/2/media/upload/${id}/finalize`);
    expect(finalized.body.data).toMatchObject({ processing_info: { state: 'pending', check_after_secs: 1 } });
    const early = await call('POST', '/2/tweets', { text: 'too soon', media: { media_ids: [id] } });
    expect(early.status).toBe(400);
    expect(early.body.errors?.[0]?.message).toBe('Your media IDs are invalid.');
    await call('GET', `/2/media/upload?command=STATUS&media_id=${id}`);
    await call('GET', `/2/media/upload?command=STATUS&media_id=${id}`);
    expect((await call('POST', '/2/tweets', { text: 'now', media: { media_ids: [id] } })).status).toBe(201);
  });

  it('refuses a media type that does not fit its category, and a GIF in the simple upload', async () => {
    const wrong = await call('POST', '/2/media/upload/initialize', {
      media_type: 'video/mp4',
      total_bytes: 10,
      media_category: 'tweet_gif',
    });
    expect(wrong.status).toBe(400);
    const gif = await call('POST', '/2/media/upload', {
      media: b64(10),
      media_category: 'tweet_image',
      media_type: 'image/gif',
    });
    expect(gif.status).toBe(400);
    const tooBig = await call('POST', '/2/media/upload/initialize', {
      media_type: 'image/gif',
      total_bytes: 15 * 1024 * 1024 + 1,
      media_category: 'tweet_gif',
    });
    expect(tooBig.status).toBe(400);
  });
});
