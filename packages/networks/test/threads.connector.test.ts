import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { startNetworkSim, type TRunningSim } from '@sps/network-sim';
import type { TConnectorAccount, TNetworkConnector, TPublishInput } from '../src/connector.js';
import { createThreadsConnector } from '../src/threads.connector.js';

const account: TConnectorAccount = {
  id: 'acc-t',
  platform: 'threads',
  accountName: 'sps_threads',
  externalId: '17841400000',
  instanceUrl: null,
  token: 'th-token',
};

function input(text: string, extra: Partial<TPublishInput> = {}): TPublishInput {
  return { account, text, media: null, replyTo: null, root: null, idempotencyKey: `k-${text}`, ...extra };
}
const containerRequests = () =>
  running.sim.requests.filter(
    (r) => r.method === 'POST' && r.path.includes('/threads?') === false && /\/threads$/.test(r.path),
  );

let running: TRunningSim;
let connector: TNetworkConnector;

beforeAll(async () => {
  running = await startNetworkSim();
  connector = createThreadsConnector({ baseUrl: running.baseUrls.threads, timeoutMs: 2000 });
});
afterAll(() => running.close());
beforeEach(() => running.sim.reset());

describe('Threads connector', () => {
  it('creates a TEXT container, publishes it and returns the permalink', async () => {
    const outcome = await connector.publish(input('hello threads'));
    if (!outcome.ok) throw new Error(outcome.failure.message);
    const [create] = containerRequests();
    expect(create?.path).toBe('/threads/17841400000/threads');
    expect(create?.headers.authorization).toBe('Bearer th-token');
    expect(create?.body).toEqual({ text: 'hello threads', media_type: 'TEXT' });
    const publish = running.sim.requests.find((r) => r.path.includes('/threads_publish'));
    expect(publish?.path).toMatch(/^\/threads\/17841400000\/threads_publish\?creation_id=\d+$/);
    expect(outcome.url).toMatch(/^https:\/\/www\.threads\.net\/@sim\/post\//);
    expect(running.sim.getPost('threads', outcome.remoteId)?.text).toBe('hello threads');
  });

  it("posts as 'me' when the account has no user id", async () => {
    await connector.publish(input('me', { account: { ...account, externalId: null } }));
    expect(containerRequests()[0]?.path).toBe('/threads/me/threads');
  });

  it('chains replies with reply_to_id', async () => {
    const ids: string[] = [];
    let previous: { remoteId: string } | null = null;
    for (const text of ['one', 'two', 'three']) {
      const outcome = await connector.publish(input(text, { replyTo: previous }));
      if (!outcome.ok) throw new Error(outcome.failure.message);
      ids.push(outcome.remoteId);
      previous = { remoteId: outcome.remoteId };
    }
    expect(ids.map((id) => running.sim.getPost('threads', id)?.replyTo)).toEqual([null, ids[0], ids[1]]);
  });

  it('builds a carousel from several images', async () => {
    const images = [{ url: 'https://cdn.example/a.png', altText: 'a' }, { url: 'https://cdn.example/b.png' }];
    const outcome = await connector.publish(input('two pics', { media: { images, video: null } }));
    if (!outcome.ok) throw new Error(outcome.failure.message);
    const bodies = containerRequests().map((r) => r.body as Record<string, unknown>);
    expect(bodies.slice(0, 2)).toEqual([
      { media_type: 'IMAGE', image_url: 'https://cdn.example/a.png', is_carousel_item: true, alt_text: 'a' },
      { media_type: 'IMAGE', image_url: 'https://cdn.example/b.png', is_carousel_item: true },
    ]);
    expect(bodies[2]).toMatchObject({ media_type: 'CAROUSEL', text: 'two pics' });
  });

  it('maps Graph code 190 (HTTP 400) to auth_expired with a reconnect hint', async () => {
    running.sim.addFault({ platform: 'threads', kind: 'auth_expired', remaining: 1 });
    const outcome = await connector.publish(input('nope'));
    if (outcome.ok) throw new Error('expected failure');
    expect(outcome.failure).toMatchObject({ kind: 'auth_expired', status: 400 });
    expect(outcome.failure.message).toMatch(/Reconnect/);
  });

  it('maps Graph throttling (code 4) to rate_limited using the usage header', async () => {
    running.sim.addFault({ platform: 'threads', kind: 'rate_limited', remaining: 1, retryAfterSeconds: 7 });
    const outcome = await connector.publish(input('later'));
    if (outcome.ok) throw new Error('expected failure');
    expect(outcome.failure).toMatchObject({ kind: 'rate_limited', retryAfterMs: 60_000 });
  });

  it('maps 5xx to transient and other 400s to rejected', async () => {
    running.sim.addFault({ platform: 'threads', kind: 'server_error', remaining: 1 });
    const failed = await connector.publish(input('a'));
    expect(failed.ok ? null : failed.failure.kind).toBe('transient');
    running.sim.addFault({ platform: 'threads', kind: 'rejected', remaining: 1 });
    const rejected = await connector.publish(input('b'));
    expect(rejected.ok ? null : rejected.failure).toMatchObject({ kind: 'rejected', status: 400 });
  });

  it('reports a hang after publishing as transient with an unknown outcome', async () => {
    const slow = createThreadsConnector({ baseUrl: running.baseUrls.threads, timeoutMs: 300 });
    running.sim.addFault({
      platform: 'threads',
      kind: 'hang_after_create',
      remaining: 1,
      pathIncludes: 'threads_publish',
    });
    const outcome = await slow.publish(input('maybe'));
    expect(outcome.ok ? null : outcome.failure).toMatchObject({ kind: 'transient', outcomeUnknown: true });
    expect(running.sim.postsOf('threads')).toHaveLength(1);
  });

  it('deletes a post, and treats an already deleted one as success', async () => {
    const outcome = await connector.publish(input('bye'));
    if (!outcome.ok) throw new Error(outcome.failure.message);
    expect(await connector.delete?.(account, { remoteId: outcome.remoteId })).toEqual({ ok: true });
    expect(running.sim.getPost('threads', outcome.remoteId)?.deleted).toBe(true);
    expect(await connector.delete?.(account, { remoteId: outcome.remoteId })).toEqual({ ok: true });
  });
});
