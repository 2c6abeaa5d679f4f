import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { startNetworkSim, type TRunningSim } from '@sps/network-sim';
import type { TConnectorAccount, TNetworkConnector, TPublishInput } from '../src/connector.js';
import { createMastodonConnector } from '../src/mastodon.connector.js';
import { parseInstanceLimits } from '../src/mastodon-instance.js';
import { createMediaFetcher, type TFetchMedia } from '../src/media-fetch.js';

const account: TConnectorAccount = {
  id: 'acc-m',
  platform: 'mastodon',
  accountName: 'sps@mastodon.example',
  externalId: null,
  instanceUrl: null,
  token: 'm-token',
};

function input(text: string, extra: Partial<TPublishInput> = {}): TPublishInput {
  return { account, text, media: null, replyTo: null, root: null, idempotencyKey: `k-${text}`, ...extra };
}

const STATUSES = '/api/v1/statuses';

let running: TRunningSim;
let connector: TNetworkConnector;
let images: Server;
let imageUrl: string;

beforeAll(async () => {
  running = await startNetworkSim();
  // The test image server listens on loopback, which the media fetcher refuses unless told otherwise.
  connector = createMastodonConnector({
    baseUrl: running.baseUrls.mastodon,
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

describe('Mastodon connector', () => {
  it('posts a status with bearer token and Idempotency-Key, returning the status URL', async () => {
    const outcome = await connector.publish(input('hello fedi'));
    if (!outcome.ok) throw new Error(outcome.failure.message);
    const request = running.sim.requests.find((r) => r.path.endsWith('/api/v1/statuses'));
    expect(request?.headers.authorization).toBe('Bearer m-token');
    expect(request?.headers['idempotency-key']).toBe('k-hello fedi');
    expect(request?.body).toEqual({ status: 'hello fedi' });
    expect(outcome.url).toMatch(new RegExp(`/@sim/${outcome.remoteId}$`));
  });

  it("uses the account's instance URL, the configured one (the loopback simulator here) included", async () => {
    const outcome = await createMastodonConnector({
      baseUrl: running.baseUrls.mastodon,
      timeoutMs: 2000,
    }).publish(input('on my instance', { account: { ...account, instanceUrl: running.baseUrls.mastodon } }));
    expect(outcome.ok).toBe(true);
  });

  it('an instance other than the configured one must be public HTTPS: a loopback one gets nothing', async () => {
    const elsewhere = createMastodonConnector({ baseUrl: 'https://mastodon.example', timeoutMs: 2000 });
    const outcome = await elsewhere.publish(
      input('to loopback', { account: { ...account, instanceUrl: running.baseUrls.mastodon } }),
    );
    expect(outcome.ok ? null : outcome.failure).toMatchObject({
      kind: 'rejected',
      message: expect.stringContaining('not a public HTTPS address'),
    });
    expect(running.sim.requests).toHaveLength(0);
  });

  it('a name that resolves to loopback now (DNS rebinding after connect) is refused at connection time', async () => {
    const port = new URL(running.baseUrls.mastodon).port;
    const elsewhere = createMastodonConnector({ baseUrl: 'https://mastodon.example', timeoutMs: 2000 });
    const rebound = { ...account, instanceUrl: `https://localhost:${port}/mastodon` };
    const outcome = await elsewhere.publish(input('rebound', { account: rebound }));
    expect(outcome.ok ? null : outcome.failure).toMatchObject({
      kind: 'rejected',
      message: expect.stringContaining('not public'),
    });
    expect(await elsewhere.delete?.(rebound, { remoteId: '1' })).toMatchObject({ ok: false });
    expect(running.sim.requests).toHaveLength(0);
  });

  it('rejects an account without any instance URL', async () => {
    const outcome = await createMastodonConnector({}).publish(input('where'));
    expect(outcome.ok ? null : outcome.failure.kind).toBe('rejected');
  });

  it('chains replies with in_reply_to_id', async () => {
    const ids: string[] = [];
    let previous: { remoteId: string } | null = null;
    for (const text of ['one', 'two', 'three']) {
      const outcome = await connector.publish(input(text, { replyTo: previous }));
      if (!outcome.ok) throw new Error(outcome.failure.message);
      ids.push(outcome.remoteId);
      previous = { remoteId: outcome.remoteId };
    }
    expect(ids.map((id) => running.sim.getPost('mastodon', id)?.replyTo)).toEqual([null, ids[0], ids[1]]);
  });

  it('does not duplicate a status resent with the same idempotency key', async () => {
    const first = await connector.publish(input('once'));
    const second = await connector.publish(input('once'));
    expect(first.ok && second.ok && first.remoteId === second.remoteId).toBe(true);
    expect(running.sim.postsOf('mastodon')).toHaveLength(1);
  });

  it('uploads downloaded images through /api/v2/media and attaches them', async () => {
    const outcome = await connector.publish(
      input('pic', { media: { images: [{ url: imageUrl, altText: 'a cat' }], video: null } }),
    );
    if (!outcome.ok) throw new Error(outcome.failure.message);
    const upload = running.sim.requests.find((r) => r.path.endsWith('/api/v2/media'));
    expect(String(upload?.headers['content-type'])).toMatch(/^multipart\/form-data/);
    expect(running.sim.getPost('mastodon', outcome.remoteId)?.media).toHaveLength(1);
  });

  it('maps 401 to auth_expired with a reconnect hint', async () => {
    running.sim.addFault({
      platform: 'mastodon',
      kind: 'auth_expired',
      remaining: 1,
      pathIncludes: STATUSES,
    });
    const outcome = await connector.publish(input('nope'));
    if (outcome.ok) throw new Error('expected failure');
    expect(outcome.failure.kind).toBe('auth_expired');
    expect(outcome.failure.message).toMatch(/Reconnect/);
  });

  it('maps 429 to rate_limited using the ISO X-RateLimit-Reset', async () => {
    running.sim.addFault({
      platform: 'mastodon',
      kind: 'rate_limited',
      remaining: 1,
      retryAfterSeconds: 7,
      pathIncludes: STATUSES,
    });
    const outcome = await connector.publish(input('later'));
    if (outcome.ok) throw new Error('expected failure');
    expect(outcome.failure.kind).toBe('rate_limited');
    expect(outcome.failure.retryAfterMs).toBeGreaterThan(5000);
    expect(outcome.failure.retryAfterMs).toBeLessThanOrEqual(7000);
  });

  it('maps 5xx to transient and 422 to rejected', async () => {
    running.sim.addFault({
      platform: 'mastodon',
      kind: 'server_error',
      remaining: 1,
      pathIncludes: STATUSES,
    });
    const failed = await connector.publish(input('a'));
    expect(failed.ok ? null : failed.failure.kind).toBe('transient');
    running.sim.addFault({ platform: 'mastodon', kind: 'rejected', remaining: 1, pathIncludes: STATUSES });
    const rejected = await connector.publish(input('b'));
    expect(rejected.ok ? null : rejected.failure).toMatchObject({ kind: 'rejected', status: 422 });
  });

  it('reports a hang after creation as transient with an unknown outcome; the resend is deduplicated', async () => {
    const slow = createMastodonConnector({ baseUrl: running.baseUrls.mastodon, timeoutMs: 300 });
    running.sim.addFault({
      platform: 'mastodon',
      kind: 'hang_after_create',
      remaining: 1,
      pathIncludes: STATUSES,
    });
    const outcome = await slow.publish(input('maybe'));
    expect(outcome.ok ? null : outcome.failure).toMatchObject({ kind: 'transient', outcomeUnknown: true });
    expect((await connector.publish(input('maybe'))).ok).toBe(true);
    expect(running.sim.postsOf('mastodon')).toHaveLength(1);
  });

  it('deletes a status, and treats an already deleted one as success', async () => {
    const outcome = await connector.publish(input('bye'));
    if (!outcome.ok) throw new Error(outcome.failure.message);
    expect(await connector.delete?.(account, { remoteId: outcome.remoteId })).toEqual({ ok: true });
    expect(running.sim.getPost('mastodon', outcome.remoteId)?.deleted).toBe(true);
    expect(await connector.delete?.(account, { remoteId: outcome.remoteId })).toEqual({ ok: true });
  });
});

// Media as the shared fetcher hands it over (its own tests cover downloading); the connector's part is the
// upload to the server and the wait for its processing.
const files = new Map<string, { bytes: Buffer; type: string }>([
  ['https://cdn.example/a.png', { bytes: Buffer.from('\x89PNG-one', 'latin1'), type: 'image/png' }],
  [
    'https://cdn.example/clip.mp4',
    { bytes: Buffer.from('\0\0\0\x18ftypisom-video', 'latin1'), type: 'video/mp4' },
  ],
  [
    'https://cdn.example/broken.mp4',
    { bytes: Buffer.from('\0\0\0\x18ftypisom-fail-processing', 'latin1'), type: 'video/mp4' },
  ],
]);
const stubFetch: TFetchMedia = async (request) => {
  const file = files.get(request.url);
  if (!file)
    return { ok: false, failure: { kind: 'rejected', message: `Could not download ${request.url}` } };
  return { ok: true, value: file };
};
const withMedia = (processingWait = { intervalMs: 5, maxWaitMs: 2000 }) =>
  createMastodonConnector({
    baseUrl: running.baseUrls.mastodon,
    timeoutMs: 2000,
    fetchMedia: stubFetch,
    processingWait,
  });
const paths = () => running.sim.requests.map((r) => `${r.method} ${r.path.replace(/\d{10,}/g, ':id')}`);
const setInstance = (config: Record<string, unknown>) =>
  fetch(`${running.baseUrls.mastodon}/__sim/instance`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(config),
  });

describe('Mastodon connector media and instance limits', () => {
  afterEach(() => setInstance({}));

  it('polls a video answered 202 until the server has processed it, then posts the status', async () => {
    const outcome = await withMedia().publish(
      input('clip', { media: { images: [], video: { url: 'https://cdn.example/clip.mp4' } } }),
    );
    if (!outcome.ok) throw new Error(outcome.failure.message);
    expect(paths()).toEqual([
      'GET /mastodon/api/v2/instance',
      'POST /mastodon/api/v2/media',
      // 206 while processing, then 200: only then the status.
      'GET /mastodon/api/v1/media/:id',
      'GET /mastodon/api/v1/media/:id',
      'POST /mastodon/api/v1/statuses',
    ]);
    expect(running.sim.getPost('mastodon', outcome.remoteId)?.media).toHaveLength(1);
  });

  it('with kept progress, answers pending while the video is processed and posts on a later call, uploaded once', async () => {
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
    // No sleep in the call: the ids and the wait's start are saved, the caller comes back later.
    expect(outcome.ok ? null : outcome.pending).toEqual({ checkAfterMs: 5 });
    expect(progress.saved).toEqual({
      mediaIds: expect.any(String),
      processing: expect.any(String),
      waitSince: expect.any(String),
    });
    for (let calls = 1; !outcome.ok && outcome.pending && calls < 20; calls += 1) {
      outcome = await connector.publish(args);
    }
    if (!outcome.ok) throw new Error(outcome.failure.message);
    // Cleared before the status: an interrupted post is settled by its Idempotency-Key or a read-back.
    expect(progress.saved).toBeNull();
    expect(paths().filter((p) => p === 'POST /mastodon/api/v2/media')).toHaveLength(1);
    expect(running.sim.getPost('mastodon', outcome.remoteId)?.media).toHaveLength(1);
  });

  it('attaches an image processed in the upload request (200) without polling, with its description', async () => {
    const outcome = await withMedia().publish(
      input('pic', {
        media: { images: [{ url: 'https://cdn.example/a.png', altText: 'a cat' }], video: null },
      }),
    );
    if (!outcome.ok) throw new Error(outcome.failure.message);
    expect(paths().filter((p) => p.includes('/api/v1/media/'))).toEqual([]);
    const upload = running.sim.requests.find((r) => r.path.endsWith('/api/v2/media'));
    expect(Buffer.isBuffer(upload?.body) && upload.body.toString('latin1')).toContain('a cat');
  });

  it('reports media the server failed to process as rejected and posts nothing', async () => {
    const outcome = await withMedia().publish(
      input('broken', { media: { images: [], video: { url: 'https://cdn.example/broken.mp4' } } }),
    );
    expect(outcome.ok ? null : outcome.failure).toMatchObject({ kind: 'rejected' });
    expect(running.sim.postsOf('mastodon')).toHaveLength(0);
  });

  it('gives up waiting for processing as transient (retried later) without posting', async () => {
    const outcome = await withMedia({ intervalMs: 50, maxWaitMs: 0 }).publish(
      input('slow', { media: { images: [], video: { url: 'https://cdn.example/clip.mp4' } } }),
    );
    expect(outcome.ok ? null : outcome.failure).toMatchObject({ kind: 'transient' });
    expect(running.sim.postsOf('mastodon')).toHaveLength(0);
  });

  it("checks the text against the instance's own character limit, read once and cached", async () => {
    await setInstance({ maxCharacters: 20 });
    const connector = withMedia();
    const long = await connector.publish(input('this status is longer than twenty characters'));
    expect(long.ok ? null : long.failure).toMatchObject({
      kind: 'rejected',
      message: expect.stringContaining('over the 20 that'),
    });
    // A link counts 23 on Mastodon, so this is over 20 although the URL is short; a short text passes.
    const link = await connector.publish(input('see https://a.io'));
    expect(link.ok).toBe(false);
    const short = await connector.publish(input('short one'));
    expect(short.ok).toBe(true);
    expect(paths().filter((p) => p.endsWith('/api/v2/instance'))).toHaveLength(1);
    expect(paths().filter((p) => p.endsWith('/api/v1/statuses'))).toHaveLength(1);
  });

  it('accepts a long text where the instance allows it (a raised limit)', async () => {
    await setInstance({ maxCharacters: 5000 });
    const outcome = await withMedia().publish(input('x'.repeat(1200)));
    expect(outcome.ok).toBe(true);
  });

  it("downloads no more than the service's maximums whatever the instance announces", async () => {
    await setInstance({ imageSizeLimit: 2 ** 31, videoSizeLimit: 2 ** 33 });
    const asked: number[] = [];
    const connector = createMastodonConnector({
      baseUrl: running.baseUrls.mastodon,
      timeoutMs: 2000,
      processingWait: { intervalMs: 5, maxWaitMs: 2000 },
      fetchMedia: async (request) => {
        asked.push(request.maxBytes);
        return stubFetch(request);
      },
    });
    const image = { images: [{ url: 'https://cdn.example/a.png' }], video: null };
    expect((await connector.publish(input('big image', { media: image }))).ok).toBe(true);
    const video = { images: [], video: { url: 'https://cdn.example/clip.mp4' } };
    expect((await connector.publish(input('big video', { media: video }))).ok).toBe(true);
    expect(asked).toEqual([16 * 1024 * 1024, 512 * 1024 * 1024]);
    // Smaller announcements are kept as they are.
    expect(
      parseInstanceLimits({ configuration: { media_attachments: { image_size_limit: 1000 } } }),
    ).toMatchObject({ imageSizeLimit: 1000, videoSizeLimit: 99 * 1024 * 1024 });
  });

  it('removes the spooled video when its part cannot be read, before anything is sent', async () => {
    let disposed = 0;
    const spooling: TFetchMedia = Object.assign((request: Parameters<TFetchMedia>[0]) => stubFetch(request), {
      // The spooled file is gone by the time its part is built (a tmp cleaner, a full disk): the Blob throws.
      toFile: async () => ({
        ok: true as const,
        value: {
          path: '/nonexistent/sps-media-test/video',
          size: 10,
          type: 'video/mp4',
          dispose: async () => {
            disposed += 1;
          },
        },
      }),
    });
    const connector = createMastodonConnector({
      baseUrl: running.baseUrls.mastodon,
      timeoutMs: 2000,
      fetchMedia: spooling,
    });
    const outcome = await connector
      .publish(input('gone', { media: { images: [], video: { url: 'https://cdn.example/clip.mp4' } } }))
      .catch((error: unknown) => ({ thrown: error }));
    expect('ok' in outcome && outcome.ok).toBe(false);
    expect(disposed).toBe(1);
    expect(paths()).not.toContain('POST /mastodon/api/v2/media');
  });

  it('publishes without a local check when the instance cannot say its limits', async () => {
    running.sim.addFault({
      platform: 'mastodon',
      kind: 'server_error',
      remaining: 1,
      pathIncludes: '/api/v2/instance',
    });
    const outcome = await withMedia().publish(input('still fine'));
    expect(outcome.ok).toBe(true);
  });
});

describe('Mastodon simulator strictness', () => {
  const raw = (path: string, init: RequestInit = {}) =>
    fetch(`${running.baseUrls.mastodon}${path}`, {
      ...init,
      headers: { authorization: 'Bearer m-token', ...(init.headers as Record<string, string> | undefined) },
    });
  const uploadVideo = async () => {
    const form = new FormData();
    form.append('file', new Blob([Buffer.from('\0\0\0\x18ftypisom')], { type: 'video/mp4' }), 'clip.mp4');
    const res = await raw('/api/v2/media', { method: 'POST', body: form });
    return { status: res.status, body: (await res.json()) as { id: string; url: string | null } };
  };
  const postStatus = (body: unknown) =>
    raw('/api/v1/statuses', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('answers 202 with a null url for a video and refuses a status with it until processed', async () => {
    const video = await uploadVideo();
    expect(video.status).toBe(202);
    expect(video.body.url).toBeNull();
    const early = await postStatus({ status: 'too soon', media_ids: [video.body.id] });
    expect(early.status).toBe(422);
    expect(await early.json()).toEqual({
      error: 'Cannot attach files that have not finished processing. Try again in a moment!',
    });
    expect((await raw(`/api/v1/media/${video.body.id}`)).status).toBe(206);
    expect((await raw(`/api/v1/media/${video.body.id}`)).status).toBe(200);
    expect((await postStatus({ status: 'now', media_ids: [video.body.id] })).status).toBe(200);
    expect(running.sim.postsOf('mastodon')).toHaveLength(1);
  });

  it("refuses a status over the instance's character limit and a file type it does not support", async () => {
    const long = await postStatus({ status: 'x'.repeat(501) });
    expect(long.status).toBe(422);
    expect(await long.json()).toEqual({ error: 'Validation failed: Text character limit of 500 exceeded' });
    const form = new FormData();
    form.append('file', new Blob([Buffer.from('%PDF-1.4')], { type: 'application/pdf' }), 'doc.pdf');
    const pdf = await raw('/api/v2/media', { method: 'POST', body: form });
    expect(pdf.status).toBe(422);
    expect(running.sim.postsOf('mastodon')).toHaveLength(0);
  });

  it('refuses unknown media ids and more attachments than the instance allows', async () => {
    expect((await postStatus({ status: 'x', media_ids: ['4242'] })).status).toBe(422);
    expect((await postStatus({ status: 'x', media_ids: ['1', '2', '3', '4', '5'] })).status).toBe(422);
  });
});
