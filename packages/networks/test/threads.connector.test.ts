import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { startNetworkSim, type TRunningSim } from '@sps/network-sim';
import got, { HTTPError } from 'got';
import type { TConnectorAccount, TNetworkConnector, TPublishInput } from '../src/connector.js';
import { classifyGraphError } from '../src/graph-api.js';
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
  connector = createThreadsConnector({
    baseUrl: running.baseUrls.threads,
    timeoutMs: 2000,
    processingWait: { intervalMs: 5, maxWaitMs: 10_000 },
  });
});
afterAll(() => running.close());
beforeEach(() => running.sim.reset());

describe('Threads connector', () => {
  it('creates a TEXT container, publishes it and returns the permalink', async () => {
    const outcome = await connector.publish(input('hello threads'));
    if (!outcome.ok) throw new Error(outcome.failure.message);
    const [create] = containerRequests();
    expect(create?.path).toBe('/threads/v1.0/17841400000/threads');
    expect(create?.headers.authorization).toBe('Bearer th-token');
    expect(create?.body).toEqual({ text: 'hello threads', media_type: 'TEXT' });
    const publish = running.sim.requests.find((r) => r.path.includes('/threads_publish'));
    expect(publish?.path).toMatch(/^\/threads\/v1\.0\/17841400000\/threads_publish\?creation_id=\d+$/);
    // The container's status is read (FINISHED) before it is published.
    const status = running.sim.requests.find((r) => r.path.includes('fields=status'));
    expect(status?.seq).toBeLessThan(publish?.seq ?? 0);
    expect(outcome.url).toMatch(/^https:\/\/www\.threads\.net\/@sim\/post\//);
    expect(running.sim.getPost('threads', outcome.remoteId)?.text).toBe('hello threads');
  });

  it("posts as 'me' when the account has no user id", async () => {
    await connector.publish(input('me', { account: { ...account, externalId: null } }));
    expect(containerRequests()[0]?.path).toBe('/threads/v1.0/me/threads');
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

  it('publishes a video once its container is FINISHED, and a carousel mixing images and a video', async () => {
    const video = await connector.publish(
      input('clip', { media: { images: [], video: { url: 'https://cdn.example/v.mp4' } } }),
    );
    if (!video.ok) throw new Error(video.failure.message);
    expect(containerRequests()[0]?.body).toEqual({
      text: 'clip',
      media_type: 'VIDEO',
      video_url: 'https://cdn.example/v.mp4',
    });
    const reads = running.sim.requests.filter((r) => r.path.includes('fields=status'));
    expect(reads).toHaveLength(2); // IN_PROGRESS, then FINISHED
    running.sim.reset();
    const mixed = await connector.publish(
      input('mix', {
        media: {
          images: [{ url: 'https://cdn.example/a.png', altText: 'alt a' }],
          video: { url: 'https://cdn.example/v.mp4' },
        },
      }),
    );
    if (!mixed.ok) throw new Error(mixed.failure.message);
    expect(containerRequests().map((r) => r.body)).toEqual([
      {
        media_type: 'IMAGE',
        image_url: 'https://cdn.example/a.png',
        alt_text: 'alt a',
        is_carousel_item: true,
      },
      { media_type: 'VIDEO', video_url: 'https://cdn.example/v.mp4', is_carousel_item: true },
      { text: 'mix', media_type: 'CAROUSEL', children: expect.stringMatching(/^\d+,\d+$/) },
    ]);
    expect(running.sim.getPost('threads', mixed.remoteId)?.media).toMatchObject({ media_type: 'CAROUSEL' });
  });

  it('sends alt text on a single image', async () => {
    const outcome = await connector.publish(
      input('pic', {
        media: { images: [{ url: 'https://cdn.example/a.png', altText: 'a bird' }], video: null },
      }),
    );
    expect(outcome.ok).toBe(true);
    expect(containerRequests()[0]?.body).toMatchObject({ media_type: 'IMAGE', alt_text: 'a bird' });
  });

  it("reports a container that ends in ERROR as rejected with Threads' reason, without publishing", async () => {
    const outcome = await connector.publish(
      input('bad', { media: { images: [], video: { url: 'https://cdn.example/fail-processing.mp4' } } }),
    );
    expect(outcome.ok ? null : outcome.failure).toMatchObject({
      kind: 'rejected',
      message: expect.stringContaining('FAILED_PROCESSING_VIDEO'),
    });
    expect(running.sim.requests.some((r) => r.path.includes('threads_publish'))).toBe(false);
  });

  it('gives up waiting as transient when the container is still IN_PROGRESS', async () => {
    const impatient = createThreadsConnector({
      baseUrl: running.baseUrls.threads,
      processingWait: { intervalMs: 1, maxWaitMs: 0 },
    });
    const outcome = await impatient.publish(
      input('slow', { media: { images: [], video: { url: 'https://cdn.example/v.mp4' } } }),
    );
    expect(outcome.ok ? null : outcome.failure.kind).toBe('transient');
    expect(running.sim.postsOf('threads')).toHaveLength(0);
  });

  it('refuses more than 20 carousel items before calling Threads', async () => {
    const images = Array.from({ length: 21 }, (_, i) => ({ url: `https://cdn.example/${i}.png` }));
    const outcome = await connector.publish(input('many', { media: { images, video: null } }));
    expect(outcome.ok ? null : outcome.failure.kind).toBe('rejected');
    expect(running.sim.requests).toHaveLength(0);
  });

  it('simulator: refuses publishing an unfinished container (24/4279009, transient) and an unknown version', async () => {
    const api = got.extend({
      prefixUrl: `${running.baseUrls.threads}/v1.0`,
      headers: { authorization: 'Bearer th-token' },
      retry: { limit: 0 },
      responseType: 'json',
    });
    const { id } = await api
      .post('me/threads', {
        json: { media_type: 'VIDEO', video_url: 'https://cdn.example/v.mp4', text: 'x' },
      })
      .json<{ id: string }>();
    const early = await api.post('me/threads_publish', { searchParams: { creation_id: id } }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(early).toBeInstanceOf(HTTPError);
    expect(((early as HTTPError).response.body as { error: unknown }).error).toMatchObject({
      code: 24,
      error_subcode: 4279009,
      error_user_title: 'Media Not Found',
    });
    expect(classifyGraphError(early, 'Threads', []).kind).toBe('transient');

    const outdated = createThreadsConnector({ baseUrl: running.baseUrls.threads, apiVersion: 'v0.9' });
    const old = await outdated.publish(input('old'));
    expect(old.ok ? null : old.failure).toMatchObject({ kind: 'rejected', status: 400 });
    expect(running.sim.postsOf('threads')).toHaveLength(0);
  });

  it('simulator: refuses a carousel of more than 20 items', async () => {
    const api = got.extend({
      prefixUrl: `${running.baseUrls.threads}/v1.0`,
      headers: { authorization: 'Bearer th-token' },
      retry: { limit: 0 },
      throwHttpErrors: false,
      responseType: 'json',
    });
    const ids: string[] = [];
    for (let i = 0; i < 21; i += 1) {
      const res = await api.post('me/threads', {
        json: { media_type: 'IMAGE', image_url: `https://cdn.example/${i}.png`, is_carousel_item: true },
      });
      ids.push((res.body as { id: string }).id);
    }
    const res = await api.post('me/threads', { json: { media_type: 'CAROUSEL', children: ids.join(',') } });
    expect(res.statusCode).toBe(400);
    expect((res.body as { error: unknown }).error).toMatchObject({ code: 100 });
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

  it('does not mark a timeout while creating the container as outcome unknown (nothing is public yet)', async () => {
    const slow = createThreadsConnector({ baseUrl: running.baseUrls.threads, timeoutMs: 300 });
    running.sim.addFault({ platform: 'threads', kind: 'slow', delayMs: 1000, remaining: 1 });
    const outcome = await slow.publish(input('slow container'));
    expect(outcome.ok ? null : outcome.failure).toMatchObject({ kind: 'transient' });
    expect(outcome.ok ? null : outcome.failure.outcomeUnknown).toBeUndefined();
    expect(running.sim.postsOf('threads')).toHaveLength(0);
  });

  it('deletes a post, and treats an already deleted one as success', async () => {
    const outcome = await connector.publish(input('bye'));
    if (!outcome.ok) throw new Error(outcome.failure.message);
    expect(await connector.delete?.(account, { remoteId: outcome.remoteId })).toEqual({ ok: true });
    expect(running.sim.getPost('threads', outcome.remoteId)?.deleted).toBe(true);
    expect(await connector.delete?.(account, { remoteId: outcome.remoteId })).toEqual({ ok: true });
  });
});
