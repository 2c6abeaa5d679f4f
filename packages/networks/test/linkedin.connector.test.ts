import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { startNetworkSim, type TRunningSim } from '@sps/network-sim';
import type { TConnectorAccount, TNetworkConnector, TPublishInput, TRemoteRef } from '../src/connector.js';
import { createLinkedInConnector } from '../src/linkedin.connector.js';

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

let running: TRunningSim;
let connector: TNetworkConnector;

beforeAll(async () => {
  running = await startNetworkSim();
  connector = createLinkedInConnector({ baseUrl: running.baseUrls.linkedin, timeoutMs: 2000 });
});
afterAll(() => running.close());
beforeEach(() => running.sim.reset());

describe('LinkedIn connector', () => {
  it('creates a post with the versioned Rest.li headers and reads the URN from x-restli-id', async () => {
    const outcome = await connector.publish(input('hello (world) #sps'));
    if (!outcome.ok) throw new Error(outcome.failure.message);
    const request = running.sim.requests[0];
    expect(request?.path).toBe('/linkedin/rest/posts');
    expect(request?.headers).toMatchObject({
      authorization: 'Bearer li-token',
      'linkedin-version': '202411',
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

  it('rejects media (not uploaded yet) and accounts without an author URN', async () => {
    const media = await connector.publish(
      input('pic', { media: { images: [{ url: 'https://cdn.example/a.png' }], video: null } }),
    );
    expect(media.ok ? null : media.failure.kind).toBe('rejected');
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
