import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { startNetworkSim, type TRunningSim } from '@sps/network-sim';
import { createBlueskyConnector } from '../src/bluesky.connector.js';
import type { TConnectorAccount, TNetworkConnector, TPublishInput, TRemoteRef } from '../src/connector.js';
import { createMediaFetcher } from '../src/media-fetch.js';

const account: TConnectorAccount = {
  id: 'acc-b',
  platform: 'bluesky',
  accountName: 'sps.bsky.social',
  externalId: null,
  instanceUrl: null,
  token: 'app-pass-1234',
};

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

let running: TRunningSim;
let connector: TNetworkConnector;
let images: Server;
let imageUrl: string;

beforeAll(async () => {
  running = await startNetworkSim();
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
  it('creates a session with the app password once, then posts with link facets', async () => {
    const fresh = createBlueskyConnector({ baseUrl: running.baseUrls.bluesky, timeoutMs: 2000 });
    const outcome = await fresh.publish(input('read https://example.com/a now'));
    if (!outcome.ok) throw new Error(outcome.failure.message);
    await fresh.publish(input('second'));
    expect(createSessions()).toHaveLength(1);
    expect(createSessions()[0]?.body).toEqual({ identifier: 'sps.bsky.social', password: 'app-pass-1234' });
    const request = createRecords()[0];
    expect(String(request?.headers.authorization)).toMatch(/^Bearer sim-access-/);
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

  it('renews an expired session once and posts', async () => {
    await connector.publish(input('warm up'));
    running.sim.reset();
    running.sim.addFault({ platform: 'bluesky', kind: 'auth_expired', remaining: 1 });
    const outcome = await connector.publish(input('after expiry'));
    expect(outcome.ok).toBe(true);
    expect(createSessions()).toHaveLength(1);
  });

  it('maps a token that cannot be renewed to auth_expired with a reconnect hint', async () => {
    running.sim.addFault({ platform: 'bluesky', kind: 'auth_expired', remaining: 3 });
    const outcome = await connector.publish(input('nope'));
    running.sim.clearFaults();
    if (outcome.ok) throw new Error('expected failure');
    expect(outcome.failure.kind).toBe('auth_expired');
    expect(outcome.failure.message).toMatch(/Reconnect/);
    expect(outcome.failure.body).not.toContain('app-pass-1234');
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

  it('reports a hang after creation as transient with an unknown outcome', async () => {
    const slow = createBlueskyConnector({ baseUrl: running.baseUrls.bluesky, timeoutMs: 300 });
    await slow.publish(input('warm up'));
    running.sim.addFault({
      platform: 'bluesky',
      kind: 'hang_after_create',
      remaining: 1,
      pathIncludes: 'createRecord',
    });
    const outcome = await slow.publish(input('maybe'));
    expect(outcome.ok ? null : outcome.failure).toMatchObject({ kind: 'transient', outcomeUnknown: true });
    expect(running.sim.postsOf('bluesky')).toHaveLength(2);
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
