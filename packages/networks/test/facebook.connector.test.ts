import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { startNetworkSim, type TRunningSim } from '@sps/network-sim';
import type { TConnectorAccount, TNetworkConnector, TPublishInput, TRemoteRef } from '../src/connector.js';
import { createFacebookConnector } from '../src/facebook.connector.js';

const account: TConnectorAccount = {
  id: 'acc-f',
  platform: 'facebook',
  accountName: 'SPS Page',
  externalId: '1122334455',
  instanceUrl: null,
  token: 'fb-page-token',
};

function input(text: string, extra: Partial<TPublishInput> = {}): TPublishInput {
  return { account, text, media: null, replyTo: null, root: null, idempotencyKey: `k-${text}`, ...extra };
}

let running: TRunningSim;
let connector: TNetworkConnector;

beforeAll(async () => {
  running = await startNetworkSim();
  connector = createFacebookConnector({ baseUrl: running.baseUrls.facebook, timeoutMs: 2000 });
});
afterAll(() => running.close());
beforeEach(() => running.sim.reset());

describe('Facebook connector', () => {
  it('posts to the page feed with the page token and returns the post URL', async () => {
    const outcome = await connector.publish(input('hello page'));
    if (!outcome.ok) throw new Error(outcome.failure.message);
    const request = running.sim.requests[0];
    expect(request?.path).toBe('/facebook/v25.0/1122334455/feed');
    expect(request?.headers.authorization).toBe('Bearer fb-page-token');
    expect(request?.body).toEqual({ message: 'hello page' });
    expect(outcome.remoteId).toMatch(/^1122334455_\d+$/);
    expect(outcome.url).toBe(`https://www.facebook.com/${outcome.remoteId}`);
  });

  it('rejects an account without a page id', async () => {
    const outcome = await connector.publish(input('x', { account: { ...account, externalId: null } }));
    expect(outcome.ok ? null : outcome.failure.kind).toBe('rejected');
  });

  it('publishes later segments as comments under the main post', async () => {
    const main = await connector.publish(input('one'));
    if (!main.ok) throw new Error(main.failure.message);
    const root: TRemoteRef = { remoteId: main.remoteId };
    let previous: TRemoteRef = root;
    const ids = [main.remoteId];
    for (const text of ['two', 'three']) {
      const outcome = await connector.publish(input(text, { replyTo: previous, root }));
      if (!outcome.ok) throw new Error(outcome.failure.message);
      expect(outcome.url).toContain(`https://www.facebook.com/${main.remoteId}?comment_id=`);
      ids.push(outcome.remoteId);
      previous = { remoteId: outcome.remoteId };
    }
    expect(ids.map((id) => running.sim.getPost('facebook', id)?.replyTo)).toEqual([
      null,
      main.remoteId,
      main.remoteId,
    ]);
  });

  it('posts one image as a photo and several as attached unpublished photos', async () => {
    const single = await connector.publish(
      input('pic', { media: { images: [{ url: 'https://cdn.example/a.png' }], video: null } }),
    );
    if (!single.ok) throw new Error(single.failure.message);
    expect(running.sim.requests[0]?.body).toEqual({ url: 'https://cdn.example/a.png', caption: 'pic' });
    expect(running.sim.getPost('facebook', single.remoteId)?.text).toBe('pic');
    running.sim.reset();
    const images = [{ url: 'https://cdn.example/a.png' }, { url: 'https://cdn.example/b.png' }];
    const multi = await connector.publish(input('pics', { media: { images, video: null } }));
    if (!multi.ok) throw new Error(multi.failure.message);
    const feed = running.sim.requests.find((r) => r.path.endsWith('/feed'));
    expect((feed?.body as { attached_media?: unknown[] } | undefined)?.attached_media).toHaveLength(2);
    expect(running.sim.postsOf('facebook')).toHaveLength(1);
  });

  it('sends each photo its alt text (alt_text_custom)', async () => {
    const single = await connector.publish(
      input('pic', {
        media: { images: [{ url: 'https://cdn.example/a.png', altText: 'a fox' }], video: null },
      }),
    );
    if (!single.ok) throw new Error(single.failure.message);
    expect(running.sim.requests[0]?.body).toEqual({
      url: 'https://cdn.example/a.png',
      caption: 'pic',
      alt_text_custom: 'a fox',
    });
    const images = [
      { url: 'https://cdn.example/a.png', altText: 'one' },
      { url: 'https://cdn.example/b.png' },
    ];
    const multi = await connector.publish(input('pics', { media: { images, video: null } }));
    if (!multi.ok) throw new Error(multi.failure.message);
    const photos = running.sim.requests.filter((r) => r.path.endsWith('/photos')).slice(1);
    expect(photos.map((r) => r.body)).toEqual([
      { url: 'https://cdn.example/a.png', published: false, alt_text_custom: 'one' },
      { url: 'https://cdn.example/b.png', published: false },
    ]);
  });

  it('refuses an expired Graph API version (code 2635) as rejected, not retried', async () => {
    const outdated = createFacebookConnector({ baseUrl: running.baseUrls.facebook, apiVersion: 'v20.0' });
    const outcome = await outdated.publish(input('old'));
    expect(outcome.ok ? null : outcome.failure).toMatchObject({ kind: 'rejected', status: 400 });
    expect(outcome.ok ? null : JSON.parse(outcome.failure.body ?? '{}')).toMatchObject({
      error: { code: 2635, message: expect.stringContaining('deprecated version of the Graph API (v20.0)') },
    });
    const current = await createFacebookConnector({
      baseUrl: running.baseUrls.facebook,
      apiVersion: 'v26.0',
    }).publish(input('new'));
    expect(current.ok).toBe(true);
  });

  it('maps Graph code 190 (HTTP 400) to auth_expired with a reconnect hint', async () => {
    running.sim.addFault({ platform: 'facebook', kind: 'auth_expired', remaining: 1 });
    const outcome = await connector.publish(input('nope'));
    if (outcome.ok) throw new Error('expected failure');
    expect(outcome.failure).toMatchObject({ kind: 'auth_expired', status: 400 });
    expect(outcome.failure.message).toMatch(/Reconnect/);
  });

  it('maps page throttling (code 32) to rate_limited using the usage header', async () => {
    running.sim.addFault({ platform: 'facebook', kind: 'rate_limited', remaining: 1, retryAfterSeconds: 7 });
    const outcome = await connector.publish(input('later'));
    if (outcome.ok) throw new Error('expected failure');
    expect(outcome.failure).toMatchObject({ kind: 'rate_limited', retryAfterMs: 60_000 });
  });

  it('maps 5xx to transient and other 400s to rejected', async () => {
    running.sim.addFault({ platform: 'facebook', kind: 'server_error', remaining: 1 });
    const failed = await connector.publish(input('a'));
    expect(failed.ok ? null : failed.failure.kind).toBe('transient');
    running.sim.addFault({ platform: 'facebook', kind: 'rejected', remaining: 1 });
    const rejected = await connector.publish(input('b'));
    expect(rejected.ok ? null : rejected.failure).toMatchObject({ kind: 'rejected', status: 400 });
  });

  it('reports a hang after creation as transient with an unknown outcome', async () => {
    const slow = createFacebookConnector({ baseUrl: running.baseUrls.facebook, timeoutMs: 300 });
    running.sim.addFault({ platform: 'facebook', kind: 'hang_after_create', remaining: 1 });
    const outcome = await slow.publish(input('maybe'));
    expect(outcome.ok ? null : outcome.failure).toMatchObject({ kind: 'transient', outcomeUnknown: true });
    expect(running.sim.postsOf('facebook')).toHaveLength(1);
  });

  it('deletes a post, and treats an already deleted one as success', async () => {
    const outcome = await connector.publish(input('bye'));
    if (!outcome.ok) throw new Error(outcome.failure.message);
    expect(await connector.delete?.(account, { remoteId: outcome.remoteId })).toEqual({ ok: true });
    expect(running.sim.getPost('facebook', outcome.remoteId)?.deleted).toBe(true);
    expect(await connector.delete?.(account, { remoteId: outcome.remoteId })).toEqual({ ok: true });
  });
});
