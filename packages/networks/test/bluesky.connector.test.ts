import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { fakeMp4 } from '@sps/core';
import { startNetworkSim, type TRunningSim } from '@sps/network-sim';
import sharp from 'sharp';
import { createBlueskyConnector } from '../src/bluesky.connector.js';
import { blueskyRecordKey } from '../src/bluesky-rkey.js';
import {
  BLUESKY_DAILY_LIMIT_RECHECK_MS,
  uploadAnswerFailure,
  uploadLimitsFailure,
} from '../src/bluesky-video-limits.js';
import type { TConnectorAccount, TNetworkConnector, TPublishInput, TRemoteRef } from '../src/connector.js';
import { createMediaFetcher, type TFetchMedia } from '../src/media-fetch.js';
import { createBlueskySession, refreshBlueskySession } from '../src/oauth/bluesky-session.js';

/** Signed in once (as the credential check does at connect); the connector only ever uses the session. */
let account: TConnectorAccount;

function input(text: string, extra: Partial<TPublishInput> = {}): TPublishInput {
  return { account, text, media: null, replyTo: null, root: null, idempotencyKey: `k-${text}`, ...extra };
}

type TRecordBody = {
  record: Record<string, unknown> & { reply?: { root: { uri: string }; parent: { uri: string } } };
};
const createRecords = () =>
  running.sim.requests.filter((r) => r.path.endsWith('com.atproto.repo.createRecord'));
const createSessions = () =>
  running.sim.requests.filter((r) => r.path.endsWith('com.atproto.server.createSession'));

const CREATED = new Date('2026-03-01T10:00:00.000Z');

let running: TRunningSim;
let connector: TNetworkConnector;
let images: Server;
let imageUrl: string;

beforeAll(async () => {
  running = await startNetworkSim();
  const session = await createBlueskySession(
    { serviceUrl: running.baseUrls.bluesky, identifier: 'sps.bsky.social', timeoutMs: 2000 },
    'app-pass-1234',
  );
  account = {
    id: 'acc-b',
    platform: 'bluesky',
    accountName: 'sps.bsky.social',
    externalId: session.did ?? null,
    instanceUrl: null,
    token: session.accessToken,
    ...(session.extra?.pds ? { extra: { pds: session.extra.pds } } : {}),
  };
  // The test image server listens on loopback, which the media fetcher refuses unless told otherwise.
  connector = createBlueskyConnector({
    baseUrl: running.baseUrls.bluesky,
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

describe('Bluesky connector', () => {
  it('posts with the stored session access JWT, never signing in itself, with link facets', async () => {
    const fresh = createBlueskyConnector({ baseUrl: running.baseUrls.bluesky, timeoutMs: 2000 });
    const outcome = await fresh.publish(input('read https://example.com/a now'));
    if (!outcome.ok) throw new Error(outcome.failure.message);
    await fresh.publish(input('second'));
    expect(createSessions()).toHaveLength(0);
    const request = createRecords()[0];
    expect(String(request?.headers.authorization)).toBe(`Bearer ${account.token}`);
    const { record } = (request?.body ?? {}) as TRecordBody;
    expect(record).toMatchObject({ $type: 'app.bsky.feed.post', text: 'read https://example.com/a now' });
    expect(record.facets).toEqual([
      {
        index: { byteStart: 5, byteEnd: 26 },
        features: [{ $type: 'app.bsky.richtext.facet#link', uri: 'https://example.com/a' }],
      },
    ]);
    expect(outcome.remoteId).toMatch(/^at:\/\/did:plc:\w+\/app\.bsky\.feed\.post\/\w{13}$/);
    expect(outcome.meta?.cid).toMatch(/^bafyrei/);
    expect(outcome.url).toBe(
      `https://bsky.app/profile/sps.bsky.social/post/${outcome.remoteId.split('/').pop()}`,
    );
  });

  it("the operator's configured PDS (the loopback simulator here) is used for an account that names it", async () => {
    const outcome = await connector.publish(
      input('on the configured pds', { account: { ...account, instanceUrl: running.baseUrls.bluesky } }),
    );
    expect(outcome.ok).toBe(true);
  });

  it('a PDS other than the configured one must be public HTTPS: loopback, or a name for it, gets nothing', async () => {
    const port = new URL(running.baseUrls.bluesky).port;
    const elsewhere = createBlueskyConnector({ baseUrl: 'https://bsky.example', timeoutMs: 2000 });
    for (const instanceUrl of [running.baseUrls.bluesky, `https://localhost:${port}/bluesky`]) {
      const chosen = { ...account, instanceUrl };
      const outcome = await elsewhere.publish(input('to loopback', { account: chosen }));
      expect(outcome.ok ? null : outcome.failure).toMatchObject({
        kind: 'rejected',
        message: expect.stringMatching(/not a public HTTPS address|not public/),
      });
      expect(
        await elsewhere.delete?.(chosen, { remoteId: 'at://did:plc:x/app.bsky.feed.post/3k' }),
      ).toMatchObject({
        ok: false,
        failure: { kind: 'rejected' },
      });
      const found = await elsewhere.findPublished?.({
        account: chosen,
        idempotencyKey: 'k',
        postCreatedAt: CREATED,
      } as never);
      expect(found?.kind).toBe('cannot_tell');
    }
    expect(running.sim.requests).toHaveLength(0);
  });

  it('chains replies with the first post as root and the previous one as parent', async () => {
    const refs: TRemoteRef[] = [];
    for (const text of ['one', 'two', 'three']) {
      const outcome = await connector.publish(
        input(text, { replyTo: refs.at(-1) ?? null, root: refs[0] ?? null }),
      );
      if (!outcome.ok) throw new Error(outcome.failure.message);
      refs.push({ remoteId: outcome.remoteId, ...(outcome.meta ? { meta: outcome.meta } : {}) });
    }
    const replies = createRecords().map((r) => (r.body as TRecordBody).record.reply);
    expect(replies[0]).toBeUndefined();
    expect(replies[1]).toEqual({ root: refs[0]?.meta, parent: refs[0]?.meta });
    expect(replies[2]).toEqual({ root: refs[0]?.meta, parent: refs[1]?.meta });
    expect(refs.map((r) => running.sim.getPost('bluesky', r.remoteId)?.replyTo)).toEqual([
      null,
      refs[0]?.remoteId,
      refs[1]?.remoteId,
    ]);
  });

  it('uploads images as blobs and embeds them', async () => {
    const outcome = await connector.publish(
      input('pic', { media: { images: [{ url: imageUrl, altText: 'a cat' }], video: null } }),
    );
    if (!outcome.ok) throw new Error(outcome.failure.message);
    const upload = running.sim.requests.find((r) => r.path.endsWith('com.atproto.repo.uploadBlob'));
    expect(upload?.headers['content-type']).toBe('image/png');
    const { record } = (createRecords()[0]?.body ?? {}) as TRecordBody;
    expect(record.embed).toMatchObject({
      $type: 'app.bsky.embed.images',
      images: [{ alt: 'a cat', image: { $type: 'blob' } }],
    });
  });

  it("reports an expired access JWT (the PDS's 400 ExpiredToken) as auth_expired and signs in nowhere", async () => {
    running.sim.addFault({ platform: 'bluesky', kind: 'auth_expired', remaining: 1 });
    const outcome = await connector.publish(input('after expiry'));
    if (outcome.ok) throw new Error('expected failure');
    expect(outcome.failure).toMatchObject({ kind: 'auth_expired', status: 400 });
    expect(outcome.failure.body).toContain('ExpiredToken');
    expect(createSessions()).toHaveLength(0);
  });

  it('asks for a session (auth_expired) when the stored token is an app password, without calling Bluesky', async () => {
    const outcome = await connector.publish({
      ...input('legacy'),
      account: { ...account, token: 'app-pass-1234' },
    });
    if (outcome.ok) throw new Error('expected failure');
    expect(outcome.failure.kind).toBe('auth_expired');
    expect(outcome.failure.message).toMatch(/reconnect/);
    expect(running.sim.requests.filter((r) => r.platform === 'bluesky')).toHaveLength(0);
  });

  it('maps 429 to rate_limited using ratelimit-reset', async () => {
    await connector.publish(input('warm up'));
    running.sim.addFault({ platform: 'bluesky', kind: 'rate_limited', remaining: 1, retryAfterSeconds: 7 });
    const outcome = await connector.publish(input('later'));
    if (outcome.ok) throw new Error('expected failure');
    expect(outcome.failure.kind).toBe('rate_limited');
    expect(outcome.failure.retryAfterMs).toBeGreaterThan(5000);
    expect(outcome.failure.retryAfterMs).toBeLessThanOrEqual(7000);
  });

  it('maps 5xx to transient and 400 to rejected', async () => {
    await connector.publish(input('warm up'));
    running.sim.addFault({ platform: 'bluesky', kind: 'server_error', remaining: 1 });
    const failed = await connector.publish(input('a'));
    expect(failed.ok ? null : failed.failure.kind).toBe('transient');
    running.sim.addFault({ platform: 'bluesky', kind: 'rejected', remaining: 1 });
    const rejected = await connector.publish(input('b'));
    expect(rejected.ok ? null : rejected.failure).toMatchObject({ kind: 'rejected', status: 400 });
  });

  it('recognises a record whose answer was lost by reading its key back, and writes no second one', async () => {
    const slow = createBlueskyConnector({ baseUrl: running.baseUrls.bluesky, timeoutMs: 300 });
    await slow.publish(input('warm up'));
    running.sim.addFault({
      platform: 'bluesky',
      kind: 'hang_after_create',
      remaining: 1,
      pathIncludes: 'createRecord',
    });
    const outcome = await slow.publish(input('maybe', { postCreatedAt: CREATED }));
    if (!outcome.ok) throw new Error(outcome.failure.message);
    expect(outcome.remoteId.split('/').pop()).toBe(blueskyRecordKey('k-maybe', CREATED));
    expect(outcome.meta?.cid).toMatch(/^bafyrei/);
    expect(running.sim.postsOf('bluesky')).toHaveLength(2);
  });

  it('answers a resend of an existing record with that record, on every attempt', async () => {
    const first = await connector.publish(input('once', { postCreatedAt: CREATED }));
    const again = await connector.publish(input('once', { postCreatedAt: CREATED }));
    if (!first.ok || !again.ok) throw new Error('expected both to succeed');
    expect(again.remoteId).toBe(first.remoteId);
    expect(again.meta).toEqual(first.meta);
    expect(running.sim.postsOf('bluesky')).toHaveLength(1);
    // The PDS refused the second create (500) and the record was read back at the same key.
    expect(running.sim.requests.filter((r) => r.path.includes('getRecord'))).toHaveLength(1);
  });

  it('derives a valid TID record key from (post, network, segment) and the post creation time', () => {
    const a = blueskyRecordKey('post-1-bluesky-0', CREATED);
    expect(a).toMatch(/^[234567abcdefghij][234567abcdefghijklmnopqrstuvwxyz]{12}$/);
    expect(blueskyRecordKey('post-1-bluesky-0', CREATED)).toBe(a);
    expect(blueskyRecordKey('post-1-bluesky-1', CREATED)).not.toBe(a);
    expect(blueskyRecordKey('post-2-bluesky-0', CREATED)).not.toBe(a);
    // The timestamp part is the creation time: keys sort by it.
    expect(blueskyRecordKey('post-1-bluesky-0', new Date(CREATED.getTime() + 1000)) > a).toBe(true);
  });

  it('deletes a post by its record key', async () => {
    const outcome = await connector.publish(input('bye'));
    if (!outcome.ok) throw new Error(outcome.failure.message);
    const ref = { remoteId: outcome.remoteId, ...(outcome.meta ? { meta: outcome.meta } : {}) };
    expect(await connector.delete?.(account, ref)).toEqual({ ok: true });
    expect(running.sim.getPost('bluesky', outcome.remoteId)?.deleted).toBe(true);
    expect(await connector.delete?.(account, ref)).toEqual({ ok: true });
  });
});

const mp4 = (text: string) => Buffer.concat([Buffer.from('\0\0\0\x18ftypisom', 'latin1'), Buffer.from(text)]);
const files = new Map<string, { bytes: Buffer; type: string }>([
  ['https://cdn.example/clip.mp4', { bytes: mp4('a short clip'), type: 'video/mp4' }],
  ['https://cdn.example/again.mp4', { bytes: mp4('posted twice'), type: 'video/mp4' }],
  // A portrait phone video: 1920x1080 frames turned a quarter by the track matrix.
  [
    'https://cdn.example/resumed.mp4',
    {
      bytes: Buffer.from(fakeMp4(4, 256, { width: 1920, height: 1080, quarterTurn: true })),
      type: 'video/mp4',
    },
  ],
  [
    'https://cdn.example/wide.mp4',
    { bytes: Buffer.from(fakeMp4(2, 128, { width: 1280, height: 720 })), type: 'video/mp4' },
  ],
  ['https://cdn.example/broken.mp4', { bytes: mp4('fail-processing'), type: 'video/mp4' }],
]);
const stubFetch: TFetchMedia = async (request) => {
  const file = files.get(request.url);
  if (!file)
    return { ok: false, failure: { kind: 'rejected', message: `Could not download ${request.url}` } };
  return { ok: true, value: file };
};
const withMedia = () =>
  createBlueskyConnector({
    baseUrl: running.baseUrls.bluesky,
    timeoutMs: 2000,
    fetchMedia: stubFetch,
    processingWait: { intervalMs: 5, maxWaitMs: 2000 },
    videoServiceUrl: `${running.baseUrls.bluesky}/video`,
  });
const lastRecord = () => (createRecords().at(-1)?.body ?? {}) as TRecordBody;

describe('Bluesky connector rich text and media', () => {
  it('puts the DID resolved from the handle in mention facets, at UTF-8 byte offsets; unknown handles stay text', async () => {
    const text = '🎉 hi @alice.bsky.social and @nobody.example.com, see example.org';
    const outcome = await connector.publish(input(text));
    if (!outcome.ok) throw new Error(outcome.failure.message);
    const { record } = lastRecord();
    const bytes = Buffer.from(text);
    const at = (part: string) => ({
      byteStart: bytes.indexOf(part),
      byteEnd: bytes.indexOf(part) + Buffer.byteLength(part),
    });
    // The emoji is 4 bytes (2 UTF-16 units): byte offsets differ from string indexes.
    expect(at('@alice.bsky.social')).toEqual({ byteStart: 8, byteEnd: 26 });
    expect(record.facets).toMatchObject([
      {
        index: at('@alice.bsky.social'),
        features: [{ $type: 'app.bsky.richtext.facet#mention', did: expect.stringMatching(/^did:plc:\w+$/) }],
      },
      {
        index: at('example.org'),
        features: [{ $type: 'app.bsky.richtext.facet#link', uri: 'https://example.org' }],
      },
    ]);
    expect(record.facets).toHaveLength(2);
  });

  it('fails as transient (retried) when the handle lookup itself fails, rather than dropping the mention', async () => {
    await connector.publish(input('warm up'));
    running.sim.addFault({
      platform: 'bluesky',
      kind: 'server_error',
      remaining: 1,
      pathIncludes: 'resolveHandle',
    });
    const outcome = await connector.publish(input('hi @carol.bsky.social'));
    expect(outcome.ok ? null : outcome.failure.kind).toBe('transient');
    expect(createRecords()).toHaveLength(1);
  });

  it('gives images their aspect ratio and alt text', async () => {
    const png = await sharp({ create: { width: 40, height: 20, channels: 3, background: '#336699' } })
      .png()
      .toBuffer();
    files.set('https://cdn.example/wide.png', { bytes: png, type: 'image/png' });
    const outcome = await withMedia().publish(
      input('wide', {
        media: { images: [{ url: 'https://cdn.example/wide.png', altText: 'a blue band' }], video: null },
      }),
    );
    if (!outcome.ok) throw new Error(outcome.failure.message);
    expect(lastRecord().record.embed).toMatchObject({
      $type: 'app.bsky.embed.images',
      images: [
        { alt: 'a blue band', aspectRatio: { width: 40, height: 20 }, image: { mimeType: 'image/png' } },
      ],
    });
  });

  it('posts a video through the video service: limits, service token, upload, job status, embed', async () => {
    const outcome = await withMedia().publish(
      input('video', { media: { images: [], video: { url: 'https://cdn.example/clip.mp4' } } }),
    );
    if (!outcome.ok) throw new Error(outcome.failure.message);
    const calls = running.sim.requests.map((r) => r.path.split('?')[0]);
    expect(calls).toEqual([
      '/bluesky/xrpc/com.atproto.server.getServiceAuth',
      '/bluesky/video/xrpc/app.bsky.video.getUploadLimits',
      '/bluesky/xrpc/com.atproto.server.getServiceAuth',
      '/bluesky/video/xrpc/app.bsky.video.uploadVideo',
      '/bluesky/video/xrpc/app.bsky.video.getJobStatus',
      '/bluesky/video/xrpc/app.bsky.video.getJobStatus',
      '/bluesky/xrpc/com.atproto.repo.createRecord',
    ]);
    const auth = running.sim.requests.filter((r) => r.path.includes('getServiceAuth')).map((r) => r.path);
    expect(auth[1]).toContain('lxm=com.atproto.repo.uploadBlob');
    expect(lastRecord().record.embed).toMatchObject({
      $type: 'app.bsky.embed.video',
      video: { $type: 'blob', mimeType: 'video/mp4' },
    });
    // No MP4 header to read a size from: no ratio rather than a guessed one.
    expect(lastRecord().record.embed).not.toHaveProperty('aspectRatio');
  });

  it('sends the aspect ratio read from the MP4 track header with the video embed', async () => {
    const outcome = await withMedia().publish(
      input('wide video', { media: { images: [], video: { url: 'https://cdn.example/wide.mp4' } } }),
    );
    if (!outcome.ok) throw new Error(outcome.failure.message);
    expect(lastRecord().record.embed).toMatchObject({
      $type: 'app.bsky.embed.video',
      aspectRatio: { width: 1280, height: 720 },
    });
  });

  it('with kept progress, answers pending while the video service processes the video and posts it on a later call, uploaded once', async () => {
    // The simulator holds the job in JOB_STATE_ENCODING until told otherwise.
    running.sim.processingMs.bluesky = 60 * 60_000;
    const progress = {
      saved: null as Record<string, string> | null,
      save: async (state: Record<string, string> | null) => {
        progress.saved = state;
      },
    };
    const fetched: string[] = [];
    const counting: TFetchMedia = async (request) => {
      fetched.push(request.url);
      return stubFetch(request);
    };
    const connector = createBlueskyConnector({
      baseUrl: running.baseUrls.bluesky,
      timeoutMs: 2000,
      fetchMedia: counting,
      processingWait: { intervalMs: 5, maxWaitMs: 60_000 },
      videoServiceUrl: `${running.baseUrls.bluesky}/video`,
    });
    const url = 'https://cdn.example/resumed.mp4';
    const args = { ...input('resumed', { media: { images: [], video: { url } } }), progress };
    // Each call while the service encodes is one job status read, never a sleep in the call.
    for (let call = 0; call < 3; call += 1) {
      const outcome = await connector.publish(args);
      expect(outcome.ok ? null : (outcome.pending ?? outcome.failure)).toEqual({ checkAfterMs: 5 });
    }
    // The ratio is kept with the job: the later calls do not download the video again.
    expect(progress.saved).toEqual({
      bskyJobId: expect.any(String),
      waitSince: expect.any(String),
      bskyAspectRatio: '1080:1920',
    });
    expect(createRecords()).toHaveLength(0);
    running.sim.processingMs.bluesky = 0;
    let outcome = await connector.publish(args);
    for (let calls = 1; !outcome.ok && outcome.pending && calls < 20; calls += 1) {
      outcome = await connector.publish(args);
    }
    if (!outcome.ok) throw new Error(outcome.failure.message);
    // Cleared before createRecord: an interrupted one is read back at the record key, never resumed.
    expect(progress.saved).toBeNull();
    expect(fetched).toEqual([url]);
    expect(running.sim.requests.filter((r) => r.path.includes('app.bsky.video.uploadVideo'))).toHaveLength(1);
    expect(createRecords()).toHaveLength(1);
    expect(lastRecord().record.embed).toMatchObject({
      $type: 'app.bsky.embed.video',
      video: { $type: 'blob', mimeType: 'video/mp4' },
      aspectRatio: { width: 1080, height: 1920 },
    });
  });

  it('uses the blob of a video the service already processed (already_exists)', async () => {
    const media = { images: [], video: { url: 'https://cdn.example/again.mp4' } };
    const first = await withMedia().publish(input('first', { media }));
    const second = await withMedia().publish(input('second', { media }));
    if (!first.ok || !second.ok) throw new Error('expected both to succeed');
    const embeds = createRecords().map((r) => (r.body as TRecordBody).record.embed as { video: unknown });
    expect(embeds[1]?.video).toEqual(embeds[0]?.video);
  });

  it('reports a video the service could not process as rejected and posts nothing', async () => {
    const outcome = await withMedia().publish(
      input('broken', { media: { images: [], video: { url: 'https://cdn.example/broken.mp4' } } }),
    );
    expect(outcome.ok ? null : outcome.failure).toMatchObject({
      kind: 'rejected',
      message: expect.stringContaining('could not be decoded'),
    });
    expect(createRecords()).toHaveLength(0);
  });
});

describe('Bluesky video daily limits', () => {
  const quota = (body: object) =>
    fetch(`${running.url}/__sim/video-quota/bluesky`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const uploads = () => running.sim.requests.filter((r) => r.path.includes('app.bsky.video.uploadVideo'));
  const video = (url: string) => input(`daily ${url}`, { media: { images: [], video: { url } } });

  it('a spent day of videos is rate_limited with a re-check in 4 h (retried, not failed), nothing uploaded or posted', async () => {
    expect((await quota({ videos: 0, bytes: 10_000_000_000 })).status).toBe(204);
    const outcome = await withMedia().publish(video('https://cdn.example/clip.mp4'));
    expect(outcome.ok ? null : outcome.failure).toMatchObject({
      kind: 'rate_limited',
      retryAfterMs: BLUESKY_DAILY_LIMIT_RECHECK_MS,
      message: expect.stringContaining('User has exceeded daily upload videos limit'),
    });
    expect(BLUESKY_DAILY_LIMIT_RECHECK_MS).toBe(4 * 3_600_000);
    expect(uploads()).toHaveLength(0);
    expect(createRecords()).toHaveLength(0);
  });

  it('fewer bytes left today than the video has is the same wait, asked before the upload', async () => {
    await quota({ videos: 3, bytes: 10 });
    const outcome = await withMedia().publish(video('https://cdn.example/wide.mp4'));
    expect(outcome.ok ? null : outcome.failure).toMatchObject({
      kind: 'rate_limited',
      message: expect.stringContaining('10 bytes left today'),
    });
    expect(uploads()).toHaveLength(0);
    // The allowance is spent by each upload: one video left posts, the next is a wait.
    await quota({ videos: 1, bytes: 10_000 });
    expect((await withMedia().publish(video('https://cdn.example/clip.mp4'))).ok).toBe(true);
    const next = await withMedia().publish(video('https://cdn.example/wide.mp4'));
    expect(next.ok ? null : next.failure.kind).toBe('rate_limited');
  });

  it("reads the service's answers: daily reasons wait (a ratelimit-reset sets the wait), other refusals stay rejected", () => {
    expect(
      uploadLimitsFailure({ canUpload: true, remainingDailyVideos: 5, remainingDailyBytes: 500 }, 400),
    ).toBeNull();
    expect(
      uploadLimitsFailure(
        { canUpload: false, message: 'User is not allowed to upload videos', remainingDailyVideos: 0 },
        400,
      ),
    ).toMatchObject({ kind: 'rejected', message: expect.stringContaining('not allowed') });
    expect(uploadLimitsFailure({ canUpload: false, remainingDailyVideos: 0 }, 400)?.kind).toBe(
      'rate_limited',
    );
    const reset = Math.floor(Date.now() / 1000) + 600;
    const limited = uploadAnswerFailure(
      { error: 'User has exceeded daily upload bytes limit' },
      { 'ratelimit-reset': String(reset) },
    );
    expect(limited?.kind).toBe('rate_limited');
    expect(limited?.retryAfterMs).toBeGreaterThan(590_000);
    expect(limited?.retryAfterMs).toBeLessThanOrEqual(600_000);
    expect(uploadAnswerFailure({ error: 'invalid_video', message: 'Video could not be decoded' })).toBeNull();
  });
});

describe('Bluesky simulator strictness', () => {
  let token = '';
  let did = '';
  const xrpc = async (method: string, body: unknown) => {
    const res = await fetch(`${running.baseUrls.bluesky}/xrpc/${method}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return {
      status: res.status,
      body: (await res.json()) as { error?: string; message?: string; blob?: unknown },
    };
  };
  const create = (record: Record<string, unknown>, rkey?: string) =>
    xrpc('com.atproto.repo.createRecord', {
      repo: did,
      collection: 'app.bsky.feed.post',
      ...(rkey ? { rkey } : {}),
      record: { $type: 'app.bsky.feed.post', createdAt: new Date().toISOString(), ...record },
    });

  beforeEach(async () => {
    const session = await xrpc('com.atproto.server.createSession', {
      identifier: 'raw.bsky.social',
      password: 'p',
    });
    ({ accessJwt: token, did } = session.body as unknown as { accessJwt: string; did: string });
  });

  it('refuses a mention facet whose did is a handle, and a facet outside the text', async () => {
    const handle = await create({
      text: 'hi @alice.bsky.social',
      facets: [
        {
          index: { byteStart: 3, byteEnd: 21 },
          features: [{ $type: 'app.bsky.richtext.facet#mention', did: 'alice.bsky.social' }],
        },
      ],
    });
    expect(handle).toEqual({
      status: 400,
      body: {
        error: 'InvalidRequest',
        message: 'Invalid app.bsky.feed.post record: Record/facets/0/features/0/did must be a valid did',
      },
    });
    const outside = await create({
      text: 'short',
      facets: [
        {
          index: { byteStart: 2, byteEnd: 40 },
          features: [{ $type: 'app.bsky.richtext.facet#link', uri: 'https://a.io' }],
        },
      ],
    });
    expect(outside.status).toBe(400);
    expect(running.sim.postsOf('bluesky')).toHaveLength(0);
  });

  it('refuses text over 300 graphemes, counting an emoji as one', async () => {
    expect((await create({ text: '👍'.repeat(300) })).status).toBe(200);
    const long = await create({ text: 'x'.repeat(301) });
    expect(long.body).toEqual({
      error: 'InvalidRequest',
      message: 'Invalid app.bsky.feed.post record: Record/text must not be longer than 300 graphemes',
    });
  });

  it('refuses an image blob over 1,000,000 bytes with BlobTooLarge', async () => {
    const res = await fetch(`${running.baseUrls.bluesky}/xrpc/com.atproto.repo.uploadBlob`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'image/jpeg' },
      body: Buffer.alloc(2_000_000, 1),
    });
    const { blob } = (await res.json()) as { blob: Record<string, unknown> };
    const big = await create({
      text: 'big',
      embed: { $type: 'app.bsky.embed.images', images: [{ alt: '', image: blob }] },
    });
    expect(big).toEqual({
      status: 400,
      body: {
        error: 'BlobTooLarge',
        message: 'This file is too large. It is 1.91MB but the maximum size is 976.56KB.',
      },
    });
  });

  it('refuses a record key that is not a TID, and a second record at an existing key with the PDS 500', async () => {
    expect((await create({ text: 'a' }, 'not-a-tid')).status).toBe(400);
    const rkey = blueskyRecordKey('post-x-bluesky-0', CREATED);
    expect((await create({ text: 'a' }, rkey)).status).toBe(200);
    expect(await create({ text: 'a again' }, rkey)).toEqual({
      status: 500,
      body: { error: 'InternalServerError', message: 'Internal Server Error' },
    });
    expect(running.sim.postsOf('bluesky')).toHaveLength(1);
  });
});

describe('Bluesky sessions (the simulated PDS and the refresh)', () => {
  const control = (path: string, body: unknown) =>
    fetch(`${running.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const xrpc = (method: string, bearer: string | null, body?: unknown) =>
    fetch(`${running.baseUrls.bluesky}/xrpc/${method}`, {
      method: 'POST',
      headers: {
        ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
        'content-type': 'application/json',
      },
      body: JSON.stringify(body ?? {}),
    });
  const call = (identifier: string) => ({
    serviceUrl: running.baseUrls.bluesky,
    identifier,
    timeoutMs: 2000,
  });
  afterEach(async () => {
    await control('/__sim/oauth/reset', {});
  });

  it('refuses an expired access JWT with 400 ExpiredToken, and a refresh JWT used as access with Bad token scope', async () => {
    const session = await createBlueskySession(call('clock.bsky.social'), 'pw-1');
    const record = {
      repo: session.did,
      collection: 'app.bsky.feed.post',
      record: { text: 'x', createdAt: '2026-01-01T00:00:00Z' },
    };
    expect((await xrpc('com.atproto.repo.createRecord', session.accessToken, record)).status).toBe(200);
    expect((await xrpc('com.atproto.repo.createRecord', session.refreshToken ?? '', record)).status).toBe(
      401,
    );
    await control('/__sim/oauth/advance', { seconds: 7201 });
    const expired = await xrpc('com.atproto.repo.createRecord', session.accessToken, record);
    expect(expired.status).toBe(400);
    expect(await expired.json()).toEqual({ error: 'ExpiredToken', message: 'Token has expired' });
  });

  it('rotates refresh JWTs: the successor works, a replay after the two-hour grace is revoked', async () => {
    const session = await createBlueskySession(call('rotate.bsky.social'), 'pw-2');
    const first = await xrpc('com.atproto.server.refreshSession', session.refreshToken ?? '');
    expect(first.status).toBe(200);
    const next = (await first.json()) as { accessJwt: string; refreshJwt: string };
    expect(next.refreshJwt).not.toBe(session.refreshToken);
    await control('/__sim/oauth/advance', { seconds: 2 * 3600 + 60 });
    const replay = await xrpc('com.atproto.server.refreshSession', session.refreshToken ?? '');
    expect(replay.status).toBe(400);
    expect(await replay.json()).toEqual({ error: 'ExpiredToken', message: 'Token has been revoked' });
    expect((await xrpc('com.atproto.server.refreshSession', next.refreshJwt)).status).toBe(200);
  });

  it('limits createSession to 30 per 5 minutes per account with the PDS 429 and RateLimit headers', async () => {
    for (let i = 0; i < 30; i += 1) {
      const ok = await xrpc('com.atproto.server.createSession', null, {
        identifier: 'busy.bsky.social',
        password: 'pw',
      });
      expect(ok.status).toBe(200);
    }
    const limited = await xrpc('com.atproto.server.createSession', null, {
      identifier: 'busy.bsky.social',
      password: 'pw',
    });
    expect(limited.status).toBe(429);
    expect(await limited.json()).toEqual({ error: 'RateLimitExceeded', message: 'Rate Limit Exceeded' });
    expect(limited.headers.get('ratelimit-policy')).toBe('30;w=300');
    expect(limited.headers.get('ratelimit-remaining')).toBe('0');
    expect(Number(limited.headers.get('ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000);
    // Another account is not affected; the refresh of a session is not counted.
    expect(
      (
        await xrpc('com.atproto.server.createSession', null, {
          identifier: 'calm.bsky.social',
          password: 'pw',
        })
      ).status,
    ).toBe(200);
    await expect(
      refreshBlueskySession(call('busy.bsky.social'), { token: 'x', extra: { appPassword: 'pw' } }),
    ).rejects.toMatchObject({ kind: 'transient', status: 429 });
  });

  it('refreshes with the refresh JWT; falls back to the app password only when it has expired', async () => {
    await control('/__sim/oauth/lifetimes', {
      platform: 'bluesky',
      access_seconds: 60,
      refresh_seconds: 600,
    });
    const session = await createBlueskySession(call('fallback.bsky.social'), 'pw-3');
    const credentials = {
      token: session.accessToken,
      refreshToken: session.refreshToken ?? '',
      extra: session.extra ?? {},
    };
    const signIns = () => running.sim.requests.filter((r) => r.path.endsWith('createSession')).length;
    const before = signIns();
    const refreshed = await refreshBlueskySession(call('fallback.bsky.social'), credentials);
    expect(signIns()).toBe(before);
    expect(refreshed.refreshToken).not.toBe(session.refreshToken);
    expect(refreshed.extra).toMatchObject({ appPassword: 'pw-3', pds: running.baseUrls.bluesky });
    expect(refreshed.expiresAt?.getTime()).toBeLessThan(Date.now() + 61_000);
    // The refresh JWT runs out (the simulator's clock): the app password signs in again.
    await control('/__sim/oauth/advance', { seconds: 700 });
    const again = await refreshBlueskySession(call('fallback.bsky.social'), {
      ...credentials,
      refreshToken: refreshed.refreshToken ?? '',
    });
    expect(signIns()).toBe(before + 1);
    expect(again.accessToken).toBeTruthy();
  });

  it('a revoked app password is a definitive refusal (401 AuthenticationRequired), also after the refresh JWT is gone', async () => {
    const session = await createBlueskySession(call('revoked.bsky.social'), 'pw-4');
    await control('/__sim/bluesky/revoke-app-password', { identifier: 'revoked.bsky.social' });
    const direct = await xrpc('com.atproto.server.createSession', null, {
      identifier: 'revoked.bsky.social',
      password: 'pw-4',
    });
    expect(direct.status).toBe(401);
    expect(await direct.json()).toEqual({
      error: 'AuthenticationRequired',
      message: 'Invalid identifier or password',
    });
    await expect(
      refreshBlueskySession(call('revoked.bsky.social'), {
        token: session.accessToken,
        refreshToken: session.refreshToken ?? '',
        extra: session.extra ?? {},
      }),
    ).rejects.toMatchObject({ kind: 'refused', code: 'AuthenticationRequired', status: 401 });
  });
});
