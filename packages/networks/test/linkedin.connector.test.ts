import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { startNetworkSim, type TRunningSim } from '@sps/network-sim';
import type { TConnectorAccount, TNetworkConnector, TPublishInput, TRemoteRef } from '../src/connector.js';
import { createLinkedInConnector } from '../src/linkedin.connector.js';
import type { TFetchMedia, TMediaRequest } from '../src/media-fetch.js';

const account: TConnectorAccount = {
  id: 'acc-l',
  platform: 'linkedin',
  accountName: 'SPS Person',
  externalId: 'urn:li:person:abc123',
  instanceUrl: null,
  token: 'li-token',
};

function input(text: string, extra: Partial<TPublishInput> = {}): TPublishInput {
  return { account, text, media: null, replyTo: null, root: null, idempotencyKey: `k-${text}`, ...extra };
}
const refOf = (o: { remoteId: string; meta?: Record<string, string> }): TRemoteRef => ({
  remoteId: o.remoteId,
  ...(o.meta ? { meta: o.meta } : {}),
});

// Media as the shared fetcher would hand it over (its own tests cover downloading); the connector's part is
// the upload to LinkedIn.
const files = new Map<string, { bytes: Buffer; type: string }>([
  ['https://cdn.example/a.png', { bytes: Buffer.from('\x89PNG-one'), type: 'image/png' }],
  ['https://cdn.example/b.jpg', { bytes: Buffer.from('\xff\xd8-two'), type: 'image/jpeg' }],
  ['https://cdn.example/c.webp', { bytes: Buffer.from('RIFF-webp'), type: 'image/webp' }],
  // Two upload parts: LinkedIn hands out 4 MB parts.
  ['https://cdn.example/clip.mp4', { bytes: Buffer.alloc(4 * 1024 * 1024 + 1000, 7), type: 'video/mp4' }],
  ['https://cdn.example/broken.mp4', { bytes: Buffer.from('fail-processing and more'), type: 'video/mp4' }],
]);
const fetched: TMediaRequest[] = [];
const fetchMedia: TFetchMedia = async (request) => {
  fetched.push(request);
  const file = files.get(request.url);
  if (!file)
    return { ok: false, failure: { kind: 'rejected', message: `Could not download ${request.url}` } };
  return { ok: true, value: file };
};

let running: TRunningSim;
let connector: TNetworkConnector;
const make = (extra: Parameters<typeof createLinkedInConnector>[0] = {}) =>
  createLinkedInConnector({
    baseUrl: running.baseUrls.linkedin,
    timeoutMs: 2000,
    fetchMedia,
    processingWait: { intervalMs: 5, maxWaitMs: 200 },
    ...extra,
  });

beforeAll(async () => {
  running = await startNetworkSim();
  connector = make();
});
afterAll(() => running.close());
beforeEach(() => {
  running.sim.reset();
  fetched.length = 0;
});
const paths = () => running.sim.requests.map((r) => `${r.method} ${r.path}`);
const rawCall = (path: string, headers: Record<string, string>, body: unknown = {}) =>
  fetch(`${running.baseUrls.linkedin}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer li-token', ...headers },
    body: JSON.stringify(body),
  });
const POST_BODY = {
  author: 'urn:li:person:abc123',
  commentary: 'x',
  visibility: 'PUBLIC',
  lifecycleState: 'PUBLISHED',
};

describe('LinkedIn connector', () => {
  it('creates a post with the versioned Rest.li headers and reads the URN from x-restli-id', async () => {
    const outcome = await connector.publish(input('hello (world) #sps'));
    if (!outcome.ok) throw new Error(outcome.failure.message);
    const request = running.sim.requests[0];
    expect(request?.path).toBe('/linkedin/rest/posts');
    expect(request?.headers).toMatchObject({
      authorization: 'Bearer li-token',
      'linkedin-version': '202607',
      'x-restli-protocol-version': '2.0.0',
    });
    expect(request?.body).toMatchObject({
      author: 'urn:li:person:abc123',
      commentary: 'hello \\(world\\) \\#sps',
      visibility: 'PUBLIC',
      lifecycleState: 'PUBLISHED',
    });
    expect(outcome.remoteId).toMatch(/^urn:li:share:\d+$/);
    expect(outcome.url).toBe(`https://www.linkedin.com/feed/update/${outcome.remoteId}`);
  });

  it('publishes later segments as comments under the main post', async () => {
    const main = await connector.publish(input('one'));
    if (!main.ok) throw new Error(main.failure.message);
    const root = refOf(main);
    let previous = root;
    const ids = [main.remoteId];
    for (const text of ['two', 'three']) {
      const outcome = await connector.publish(input(text, { replyTo: previous, root }));
      if (!outcome.ok) throw new Error(outcome.failure.message);
      expect(outcome.remoteId).toMatch(/^urn:li:comment:\(urn:li:share:\d+,\d+\)$/);
      ids.push(outcome.remoteId);
      previous = refOf(outcome);
    }
    const comment = running.sim.requests.find((r) => r.path.includes('/comments'));
    expect(comment?.body).toEqual({
      actor: 'urn:li:person:abc123',
      object: main.remoteId,
      message: { text: 'two' },
    });
    expect(ids.map((id) => running.sim.getPost('linkedin', id)?.replyTo)).toEqual([
      null,
      main.remoteId,
      main.remoteId,
    ]);
  });

  it('rejects accounts without an author URN before calling LinkedIn', async () => {
    const noUrn = await connector.publish(input('x', { account: { ...account, externalId: null } }));
    expect(noUrn.ok ? null : noUrn.failure.kind).toBe('rejected');
    expect(running.sim.requests).toHaveLength(0);
  });
  it('maps 401 to auth_expired with a reconnect hint', async () => {
    running.sim.addFault({ platform: 'linkedin', kind: 'auth_expired', remaining: 1 });
    const outcome = await connector.publish(input('nope'));
    if (outcome.ok) throw new Error('expected failure');
    expect(outcome.failure.kind).toBe('auth_expired');
    expect(outcome.failure.message).toMatch(/Reconnect/);
  });

  it('maps 429 to rate_limited with Retry-After', async () => {
    running.sim.addFault({ platform: 'linkedin', kind: 'rate_limited', remaining: 1, retryAfterSeconds: 7 });
    const outcome = await connector.publish(input('later'));
    if (outcome.ok) throw new Error('expected failure');
    expect(outcome.failure).toMatchObject({ kind: 'rate_limited', retryAfterMs: 7000 });
  });

  it('maps 5xx to transient and 422 to rejected', async () => {
    running.sim.addFault({ platform: 'linkedin', kind: 'server_error', remaining: 1 });
    const failed = await connector.publish(input('a'));
    expect(failed.ok ? null : failed.failure.kind).toBe('transient');
    running.sim.addFault({ platform: 'linkedin', kind: 'rejected', remaining: 1 });
    const rejected = await connector.publish(input('b'));
    expect(rejected.ok ? null : rejected.failure).toMatchObject({ kind: 'rejected', status: 422 });
  });

  it('reports a hang after creation as transient with an unknown outcome', async () => {
    const slow = createLinkedInConnector({ baseUrl: running.baseUrls.linkedin, timeoutMs: 300 });
    running.sim.addFault({ platform: 'linkedin', kind: 'hang_after_create', remaining: 1 });
    const outcome = await slow.publish(input('maybe'));
    expect(outcome.ok ? null : outcome.failure).toMatchObject({ kind: 'transient', outcomeUnknown: true });
    expect(running.sim.postsOf('linkedin')).toHaveLength(1);
  });

  it('deletes posts and comments, treating already deleted ones as success', async () => {
    const main = await connector.publish(input('bye'));
    if (!main.ok) throw new Error(main.failure.message);
    const reply = await connector.publish(input('bye too', { replyTo: refOf(main), root: refOf(main) }));
    if (!reply.ok) throw new Error(reply.failure.message);
    expect(await connector.delete?.(account, refOf(reply))).toEqual({ ok: true });
    expect(running.sim.getPost('linkedin', reply.remoteId)?.deleted).toBe(true);
    expect(await connector.delete?.(account, refOf(main))).toEqual({ ok: true });
    expect(running.sim.getPost('linkedin', main.remoteId)?.deleted).toBe(true);
    expect(await connector.delete?.(account, refOf(main))).toEqual({ ok: true });
  });
});

describe('LinkedIn media (Images and Videos APIs)', () => {
  it('uploads an image, waits until AVAILABLE and posts it with its alt text', async () => {
    const outcome = await connector.publish(
      input('pic', {
        media: { images: [{ url: 'https://cdn.example/a.png', altText: 'a cat' }], video: null },
      }),
    );
    if (!outcome.ok) throw new Error(outcome.failure.message);
    expect(fetched).toEqual([
      { url: 'https://cdn.example/a.png', kind: 'image', network: 'LinkedIn', maxBytes: 5 * 1024 * 1024 },
    ]);
    const init = running.sim.requests[0];
    expect(init?.path).toBe('/linkedin/rest/images?action=initializeUpload');
    expect(init?.body).toEqual({ initializeUploadRequest: { owner: 'urn:li:person:abc123' } });
    const upload = running.sim.requests[1];
    expect(upload?.method).toBe('PUT');
    expect(upload?.headers.authorization).toBe('Bearer li-token');
    expect(
      Buffer.compare(
        upload?.body as Buffer,
        files.get('https://cdn.example/a.png')?.bytes ?? Buffer.alloc(0),
      ),
    ).toBe(0);
    expect(paths()[2]).toMatch(/^GET \/linkedin\/rest\/images\/urn%3Ali%3Aimage%3A/);
    const post = running.sim.requests.find((r) => r.path === '/linkedin/rest/posts');
    expect(post?.body).toMatchObject({
      content: { media: { id: expect.stringMatching(/^urn:li:image:/), altText: 'a cat' } },
    });
    expect(running.sim.getPost('linkedin', outcome.remoteId)?.media).toMatchObject({
      media: { altText: 'a cat' },
    });
  });

  it('posts several images as a multiImage post', async () => {
    const images = [
      { url: 'https://cdn.example/a.png', altText: 'one' },
      { url: 'https://cdn.example/b.jpg' },
    ];
    const outcome = await connector.publish(input('two', { media: { images, video: null } }));
    if (!outcome.ok) throw new Error(outcome.failure.message);
    const post = running.sim.requests.find((r) => r.path === '/linkedin/rest/posts');
    expect(post?.body).toMatchObject({ content: { multiImage: { images: expect.any(Array) } } });
    const { content } = (post?.body ?? {}) as { content: { multiImage: { images: unknown[] } } };
    expect(content.multiImage.images).toEqual([
      { id: expect.stringMatching(/^urn:li:image:/), altText: 'one' },
      { id: expect.stringMatching(/^urn:li:image:/) },
    ]);
  });

  it('uploads a video in the parts LinkedIn lists, finalizes with their ETags and waits for AVAILABLE', async () => {
    const outcome = await connector.publish(
      input('clip', { media: { images: [], video: { url: 'https://cdn.example/clip.mp4' } } }),
    );
    if (!outcome.ok) throw new Error(outcome.failure.message);
    expect(fetched[0]).toMatchObject({ kind: 'video', maxBytes: 500 * 1024 * 1024 });
    const size = files.get('https://cdn.example/clip.mp4')?.bytes.length;
    expect(running.sim.requests[0]?.body).toEqual({
      initializeUploadRequest: {
        owner: 'urn:li:person:abc123',
        fileSizeBytes: size,
        uploadCaptions: false,
        uploadThumbnail: false,
      },
    });
    const puts = running.sim.requests.filter((r) => r.method === 'PUT');
    expect(puts.map((r) => (r.body as Buffer).length)).toEqual([4 * 1024 * 1024, 1000]);
    const finalize = running.sim.requests.find((r) => r.path.includes('finalizeUpload'));
    expect(finalize?.body).toMatchObject({
      finalizeUploadRequest: { uploadedPartIds: [expect.any(String), expect.any(String)] },
    });
    // The simulator answers PROCESSING on the first read: the post comes only after a second one.
    expect(running.sim.requests.filter((r) => r.path.startsWith('/linkedin/rest/videos/urn'))).toHaveLength(
      2,
    );
    const post = running.sim.requests.find((r) => r.path === '/linkedin/rest/posts');
    expect(post?.body).toMatchObject({ content: { media: { id: expect.stringMatching(/^urn:li:video:/) } } });
  });

  it('with kept progress, answers pending while the video processes and posts it on the next call, uploaded once', async () => {
    const progress = {
      saved: null as Record<string, string> | null,
      save: async (state: Record<string, string> | null) => {
        progress.saved = state;
      },
    };
    const args = {
      ...input('resumed', { media: { images: [], video: { url: 'https://cdn.example/clip.mp4' } } }),
      progress,
    };
    const first = await connector.publish(args);
    // No sleep in the call: the URN and the wait's start are saved, and the caller comes back later.
    expect(first.ok ? null : first.pending).toEqual({ checkAfterMs: 5 });
    expect(progress.saved).toEqual({
      video: expect.stringMatching(/^urn:li:video:/),
      waitSince: expect.any(String),
    });
    expect(paths()).not.toContain('POST /linkedin/rest/posts');
    const second = await connector.publish(args);
    if (!second.ok) throw new Error(second.failure.message);
    // Cleared before the post call: an interrupted one is read back, never resumed into a second post.
    expect(progress.saved).toBeNull();
    expect(running.sim.requests.filter((r) => r.path.includes('initializeUpload'))).toHaveLength(1);
    expect(running.sim.requests.filter((r) => r.path === '/linkedin/rest/posts')).toHaveLength(1);
  });

  it('reports a video LinkedIn failed to process as rejected, with its reason, and posts nothing', async () => {
    const outcome = await connector.publish(
      input('broken', { media: { images: [], video: { url: 'https://cdn.example/broken.mp4' } } }),
    );
    expect(outcome.ok ? null : outcome.failure).toMatchObject({
      kind: 'rejected',
      message: expect.stringContaining('Video transcoding failed'),
    });
    expect(paths()).not.toContain('POST /linkedin/rest/posts');
  });

  it('gives up waiting as transient (retried later) without posting', async () => {
    const impatient = make({ processingWait: { intervalMs: 50, maxWaitMs: 0 } });
    const outcome = await impatient.publish(
      input('slow', { media: { images: [], video: { url: 'https://cdn.example/clip.mp4' } } }),
    );
    expect(outcome.ok ? null : outcome.failure).toMatchObject({ kind: 'transient' });
    expect(paths()).not.toContain('POST /linkedin/rest/posts');
  });

  it('refuses unsupported image types, media on comment segments, mixes and download failures', async () => {
    const webp = await connector.publish(
      input('webp', { media: { images: [{ url: 'https://cdn.example/c.webp' }], video: null } }),
    );
    expect(webp.ok ? null : webp.failure.kind).toBe('rejected');
    const root = { remoteId: 'urn:li:share:1' };
    const onComment = await connector.publish(
      input('c', {
        root,
        replyTo: root,
        media: { images: [{ url: 'https://cdn.example/a.png' }], video: null },
      }),
    );
    expect(onComment.ok ? null : onComment.failure.kind).toBe('rejected');
    const mixed = await connector.publish(
      input('m', {
        media: {
          images: [{ url: 'https://cdn.example/a.png' }],
          video: { url: 'https://cdn.example/clip.mp4' },
        },
      }),
    );
    expect(mixed.ok ? null : mixed.failure.kind).toBe('rejected');
    const missing = await connector.publish(
      input('404', { media: { images: [{ url: 'https://cdn.example/none.png' }], video: null } }),
    );
    expect(missing.ok ? null : missing.failure.kind).toBe('rejected');
    expect(running.sim.requests).toHaveLength(0);
  });
});

describe('LinkedIn simulator strictness', () => {
  it('answers 426 NONEXISTENT_VERSION for a sunset version, which the connector does not retry', async () => {
    const res = await rawCall(
      '/rest/posts',
      { 'linkedin-version': '202411', 'x-restli-protocol-version': '2.0.0' },
      POST_BODY,
    );
    expect(res.status).toBe(426);
    expect(await res.json()).toEqual({
      status: 426,
      code: 'NONEXISTENT_VERSION',
      message: 'Requested version 20241101 is not active',
    });
    const outdated = make({ apiVersion: '202411' });
    const outcome = await outdated.publish(input('old'));
    expect(outcome.ok ? null : outcome.failure).toMatchObject({ kind: 'rejected', status: 426 });
    expect(running.sim.postsOf('linkedin')).toHaveLength(0);
  });

  it('accepts only versions LinkedIn published and still serves: not 202512 (never published) nor a future month', async () => {
    for (const version of ['202512', '202611', '209901', '202607.01']) {
      const res = await rawCall(
        '/rest/posts',
        { 'linkedin-version': version, 'x-restli-protocol-version': '2.0.0' },
        POST_BODY,
      );
      expect(res.status).toBe(426);
      expect(((await res.json()) as { code: string }).code).toBe('NONEXISTENT_VERSION');
    }
    const served = await rawCall(
      '/rest/posts',
      { 'linkedin-version': '202607', 'x-restli-protocol-version': '2.0.0' },
      POST_BODY,
    );
    expect(served.status).toBe(201);
  });

  it('refuses a missing version header and a missing Rest.li protocol header', async () => {
    const noVersion = await rawCall('/rest/posts', { 'x-restli-protocol-version': '2.0.0' }, POST_BODY);
    expect(noVersion.status).toBe(400);
    expect(await noVersion.json()).toMatchObject({ code: 'VERSION_MISSING' });
    const noRestli = await rawCall('/rest/posts', { 'linkedin-version': '202607' }, POST_BODY);
    expect(noRestli.status).toBe(400);
    expect(running.sim.postsOf('linkedin')).toHaveLength(0);
  });

  it('refuses a post whose image was never uploaded or whose video is still processing', async () => {
    const headers = { 'linkedin-version': '202607', 'x-restli-protocol-version': '2.0.0' };
    const unknown = await rawCall('/rest/posts', headers, {
      ...POST_BODY,
      content: { media: { id: 'urn:li:image:C4Enever' } },
    });
    expect(unknown.status).toBe(422);
    expect(await unknown.json()).toMatchObject({ message: expect.stringContaining('/content/media/id') });

    const init = await rawCall('/rest/images?action=initializeUpload', headers, {
      initializeUploadRequest: { owner: 'urn:li:person:abc123' },
    });
    const { value } = (await init.json()) as { value: { image: string } };
    const waiting = await rawCall('/rest/posts', headers, {
      ...POST_BODY,
      content: { media: { id: value.image } },
    });
    expect(waiting.status).toBe(422);
    expect(await waiting.json()).toMatchObject({ message: expect.stringContaining('WAITING_UPLOAD') });

    const video = await rawCall('/rest/videos?action=initializeUpload', headers, {
      initializeUploadRequest: { owner: 'urn:li:person:abc123', fileSizeBytes: 10 },
    });
    const plan = (await video.json()) as {
      value: { video: string; uploadToken: string; uploadInstructions: { uploadUrl: string }[] };
    };
    const put = await fetch(plan.value.uploadInstructions[0]?.uploadUrl ?? '', {
      method: 'PUT',
      headers: { authorization: 'Bearer li-token', 'content-type': 'application/octet-stream' },
      body: Buffer.alloc(10),
    });
    const etag = put.headers.get('etag');
    const finalized = await rawCall('/rest/videos?action=finalizeUpload', headers, {
      finalizeUploadRequest: {
        video: plan.value.video,
        uploadToken: plan.value.uploadToken,
        uploadedPartIds: [etag],
      },
    });
    expect(finalized.status).toBe(200);
    const processing = await rawCall('/rest/posts', headers, {
      ...POST_BODY,
      content: { media: { id: plan.value.video } },
    });
    expect(processing.status).toBe(422);
    expect(await processing.json()).toMatchObject({ message: expect.stringContaining('PROCESSING') });
    expect(running.sim.postsOf('linkedin')).toHaveLength(0);
  });

  it('refuses an image over 5 MB, a video part of the wrong size and a finalize with wrong ETags', async () => {
    const headers = { 'linkedin-version': '202607', 'x-restli-protocol-version': '2.0.0' };
    const put = (url: string, body: Buffer) =>
      fetch(url, {
        method: 'PUT',
        headers: { authorization: 'Bearer li-token', 'content-type': 'application/octet-stream' },
        body,
      });
    const image = await rawCall('/rest/images?action=initializeUpload', headers, {
      initializeUploadRequest: { owner: 'urn:li:person:abc123' },
    });
    const { value } = (await image.json()) as { value: { uploadUrl: string } };
    expect((await put(value.uploadUrl, Buffer.alloc(5 * 1024 * 1024 + 1))).status).toBe(400);

    const video = await rawCall('/rest/videos?action=initializeUpload', headers, {
      initializeUploadRequest: { owner: 'urn:li:person:abc123', fileSizeBytes: 10 },
    });
    const plan = (await video.json()) as {
      value: { video: string; uploadToken: string; uploadInstructions: { uploadUrl: string }[] };
    };
    const url = plan.value.uploadInstructions[0]?.uploadUrl ?? '';
    expect((await put(url, Buffer.alloc(9))).status).toBe(400);
    expect((await put(url, Buffer.alloc(10))).status).toBe(200);
    const finalized = await rawCall('/rest/videos?action=finalizeUpload', headers, {
      finalizeUploadRequest: {
        video: plan.value.video,
        uploadToken: plan.value.uploadToken,
        uploadedPartIds: ['"x"'],
      },
    });
    expect(finalized.status).toBe(400);
  });
});
