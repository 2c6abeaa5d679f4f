import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { startNetworkSim, type TRunningSim } from '@sps/network-sim';
import type { TConnectorAccount, TNetworkConnector, TPublishInput } from '../src/connector.js';
import { createMastodonConnector } from '../src/mastodon.connector.js';
import { createMediaFetcher } from '../src/media-fetch.js';

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

  it("uses the account's instance URL over the configured base URL", async () => {
    const elsewhere = createMastodonConnector({ baseUrl: 'http://127.0.0.1:9', timeoutMs: 2000 });
    const outcome = await elsewhere.publish(
      input('on my instance', { account: { ...account, instanceUrl: running.baseUrls.mastodon } }),
    );
    expect(outcome.ok).toBe(true);
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
    running.sim.addFault({ platform: 'mastodon', kind: 'auth_expired', remaining: 1 });
    const outcome = await connector.publish(input('nope'));
    if (outcome.ok) throw new Error('expected failure');
    expect(outcome.failure.kind).toBe('auth_expired');
    expect(outcome.failure.message).toMatch(/Reconnect/);
  });

  it('maps 429 to rate_limited using the ISO X-RateLimit-Reset', async () => {
    running.sim.addFault({ platform: 'mastodon', kind: 'rate_limited', remaining: 1, retryAfterSeconds: 7 });
    const outcome = await connector.publish(input('later'));
    if (outcome.ok) throw new Error('expected failure');
    expect(outcome.failure.kind).toBe('rate_limited');
    expect(outcome.failure.retryAfterMs).toBeGreaterThan(5000);
    expect(outcome.failure.retryAfterMs).toBeLessThanOrEqual(7000);
  });

  it('maps 5xx to transient and 422 to rejected', async () => {
    running.sim.addFault({ platform: 'mastodon', kind: 'server_error', remaining: 1 });
    const failed = await connector.publish(input('a'));
    expect(failed.ok ? null : failed.failure.kind).toBe('transient');
    running.sim.addFault({ platform: 'mastodon', kind: 'rejected', remaining: 1 });
    const rejected = await connector.publish(input('b'));
    expect(rejected.ok ? null : rejected.failure).toMatchObject({ kind: 'rejected', status: 422 });
  });

  it('reports a hang after creation as transient with an unknown outcome; the resend is deduplicated', async () => {
    const slow = createMastodonConnector({ baseUrl: running.baseUrls.mastodon, timeoutMs: 300 });
    running.sim.addFault({ platform: 'mastodon', kind: 'hang_after_create', remaining: 1 });
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
