import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { startNetworkSim, type TRunningSim } from '@sps/network-sim';
import type { TConnectorAccount, TNetworkConnector, TPublishInput } from '../src/connector.js';
import { createMediaFetcher } from '../src/media-fetch.js';
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

  it('deletes a tweet, and treats an already deleted one as success', async () => {
    const outcome = await connector.publish(input('bye'));
    if (!outcome.ok) throw new Error(outcome.failure.message);
    expect(await connector.delete?.(account, { remoteId: outcome.remoteId })).toEqual({ ok: true });
    expect(running.sim.getPost('twitter', outcome.remoteId)?.deleted).toBe(true);
    expect(await connector.delete?.(account, { remoteId: outcome.remoteId })).toEqual({ ok: true });
  });
});
