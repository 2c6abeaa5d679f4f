import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { startNetworkSim, type TRunningSim } from '@sps/network-sim';
import got, { HTTPError } from 'got';
import type { TConnectorAccount, TMedia, TNetworkConnector, TPublishInput } from '../src/connector.js';
import { classifyGraphError } from '../src/graph-api.js';
import { createInstagramConnector } from '../src/instagram.connector.js';

const account: TConnectorAccount = {
  id: 'acc-ig',
  platform: 'instagram',
  accountName: 'sps.gallery',
  externalId: '17841400000000001',
  instanceUrl: null,
  token: 'ig-token',
};
const image = (n: number) => ({ url: `https://cdn.example/img-${n}.jpg` });
const onlyImages = (count: number): TMedia => ({
  images: Array.from({ length: count }, (_, i) => image(i)),
  video: null,
});

function input(text: string, media: TMedia | null = onlyImages(1)): TPublishInput {
  return { account, text, media, replyTo: null, root: null, idempotencyKey: `k-${text}` };
}

let running: TRunningSim;
let connector: TNetworkConnector;

beforeAll(async () => {
  running = await startNetworkSim();
  connector = createInstagramConnector({
    baseUrl: running.baseUrls.instagram,
    timeoutMs: 2000,
    processingWait: { intervalMs: 5, maxWaitMs: 10_000 },
  });
});
afterAll(() => running.close());
beforeEach(() => running.sim.reset());

const V = 'v25.0';
const paths = () => running.sim.requests.map((r) => `${r.method} ${r.path.replace(/\?.*$/, '')}`);

describe('Instagram connector', () => {
  it('publishes a single image: container, media_publish, permalink', async () => {
    const outcome = await connector.publish(input('sunset'));
    if (!outcome.ok) throw new Error(outcome.failure.message);
    const [create, status, publish] = running.sim.requests;
    expect(create?.path).toBe(`/instagram/${V}/${account.externalId}/media`);
    expect(create?.headers.authorization).toBe('Bearer ig-token');
    expect(create?.body).toEqual({ image_url: 'https://cdn.example/img-0.jpg', caption: 'sunset' });
    // Published only once the container is FINISHED.
    expect(status?.path).toMatch(new RegExp(`^/instagram/${V}/\\d+\\?fields=status_code%2Cstatus$`));
    expect(publish?.path).toBe(`/instagram/${V}/${account.externalId}/media_publish`);
    expect(publish?.body).toEqual({ creation_id: expect.any(String) });
    expect(outcome.url).toMatch(/^https:\/\/www\.instagram\.com\/p\/Sim\w+\/$/);
    expect(running.sim.postsOf('instagram')).toEqual([
      expect.objectContaining({ remoteId: outcome.remoteId, text: 'sunset' }),
    ]);
  });

  it('publishes a reel after polling the container until FINISHED', async () => {
    const media: TMedia = {
      images: [],
      video: { url: 'https://cdn.example/clip.mp4', thumbnailUrl: 'https://cdn.example/c.jpg' },
    };
    const outcome = await connector.publish(input('reel', media));
    expect(outcome.ok).toBe(true);
    expect(running.sim.requests[0]?.body).toEqual({
      media_type: 'REELS',
      video_url: 'https://cdn.example/clip.mp4',
      cover_url: 'https://cdn.example/c.jpg',
      caption: 'reel',
    });
    const polls = running.sim.requests.filter((r) => r.method === 'GET' && r.path.includes('status_code'));
    expect(polls).toHaveLength(2);
  });

  it('publishes a carousel of images and a video', async () => {
    const media: TMedia = { images: [image(1), image(2)], video: { url: 'https://cdn.example/clip.mp4' } };
    const outcome = await connector.publish(input('album', media));
    expect(outcome.ok).toBe(true);
    const creates = running.sim.requests.filter((r) => r.path.endsWith('/media'));
    expect(creates.map((r) => r.body)).toEqual([
      { image_url: 'https://cdn.example/img-1.jpg', is_carousel_item: 'true' },
      { image_url: 'https://cdn.example/img-2.jpg', is_carousel_item: 'true' },
      { media_type: 'VIDEO', video_url: 'https://cdn.example/clip.mp4', is_carousel_item: 'true' },
      { media_type: 'CAROUSEL', children: expect.stringMatching(/^\d+,\d+,\d+$/), caption: 'album' },
    ]);
    expect(running.sim.postsOf('instagram')[0]?.media).toMatchObject({ type: 'CAROUSEL' });
  });

  it('rejects a post without media before calling Instagram', async () => {
    for (const media of [null, onlyImages(0)]) {
      const outcome = await connector.publish(input('text only', media));
      expect(outcome.ok ? null : outcome.failure.kind).toBe('rejected');
    }
    expect(running.sim.requests).toHaveLength(0);
  });

  it('rejects more than ten carousel items', async () => {
    const outcome = await connector.publish(input('too many', onlyImages(11)));
    expect(outcome.ok ? null : outcome.failure.kind).toBe('rejected');
    expect(running.sim.requests).toHaveLength(0);
  });

  it('reports a video Instagram cannot process as rejected', async () => {
    const media: TMedia = { images: [], video: { url: 'https://cdn.example/fail-processing.mp4' } };
    const outcome = await connector.publish(input('bad video', media));
    expect(outcome.ok ? null : outcome.failure.kind).toBe('rejected');
    expect(outcome.ok ? null : outcome.failure.message).toContain('ERROR');
    expect(paths()).not.toContain(`POST /instagram/${V}/${account.externalId}/media_publish`);
  });

  it('gives up waiting for the container as transient, without publishing', async () => {
    const impatient = createInstagramConnector({
      baseUrl: running.baseUrls.instagram,
      processingWait: { intervalMs: 1, maxWaitMs: 0 },
    });
    const outcome = await impatient.publish(
      input('slow', { images: [], video: { url: 'https://cdn.example/v.mp4' } }),
    );
    expect(outcome.ok ? null : outcome.failure).toMatchObject({ kind: 'transient' });
    expect(outcome.ok ? null : outcome.failure.outcomeUnknown).toBeFalsy();
    expect(paths()).not.toContain(`POST /instagram/${V}/${account.externalId}/media_publish`);
  });

  it('maps Graph error code 190 to auth_expired', async () => {
    running.sim.addFault({ platform: 'instagram', kind: 'auth_expired', remaining: 1 });
    const outcome = await connector.publish(input('expired'));
    if (outcome.ok) throw new Error('expected failure');
    expect(outcome.failure).toMatchObject({ kind: 'auth_expired', status: 400 });
    expect(outcome.failure.message).toMatch(/Reconnect the Instagram account/);
  });

  it('answers 401 when the token is missing', async () => {
    const outcome = await connector.publish({ ...input('no token'), account: { ...account, token: '' } });
    expect(outcome.ok ? null : outcome.failure.kind).toBe('auth_expired');
  });

  it('maps 429 to rate_limited with the retry delay', async () => {
    running.sim.addFault({ platform: 'instagram', kind: 'rate_limited', remaining: 1, retryAfterSeconds: 7 });
    const outcome = await connector.publish(input('busy'));
    expect(outcome.ok ? null : outcome.failure).toMatchObject({ kind: 'rate_limited', retryAfterMs: 7000 });
  });

  it('maps 5xx to transient and 400 to rejected', async () => {
    running.sim.addFault({ platform: 'instagram', kind: 'server_error', remaining: 1 });
    const down = await connector.publish(input('down'));
    expect(down.ok ? null : down.failure).toMatchObject({ kind: 'transient', status: 503 });
    running.sim.addFault({ platform: 'instagram', kind: 'rejected', remaining: 1 });
    const bad = await connector.publish(input('bad'));
    expect(bad.ok ? null : bad.failure).toMatchObject({ kind: 'rejected', status: 400 });
  });

  it('reports a publish call that never answers as transient with outcome unknown', async () => {
    const quick = createInstagramConnector({ baseUrl: running.baseUrls.instagram, timeoutMs: 300 });
    running.sim.addFault({ platform: 'instagram', kind: 'hang_after_create', remaining: 1 });
    const outcome = await quick.publish(input('lost answer'));
    expect(outcome.ok ? null : outcome.failure).toMatchObject({ kind: 'transient', outcomeUnknown: true });
    expect(running.sim.postsOf('instagram')).toHaveLength(1);
  });

  it('does not mark a timeout before media_publish as outcome unknown', async () => {
    const quick = createInstagramConnector({ baseUrl: running.baseUrls.instagram, timeoutMs: 300 });
    running.sim.addFault({ platform: 'instagram', kind: 'slow', delayMs: 1000, remaining: 1 });
    const outcome = await quick.publish(input('slow container'));
    expect(outcome.ok ? null : outcome.failure).toMatchObject({ kind: 'transient' });
    expect(outcome.ok ? null : outcome.failure.outcomeUnknown).toBeUndefined();
    expect(running.sim.postsOf('instagram')).toHaveLength(0);
  });

  it('sends alt text on image containers, carousel items included', async () => {
    const media: TMedia = {
      images: [{ url: 'https://cdn.example/a.jpg', altText: 'a dog' }, { url: 'https://cdn.example/b.jpg' }],
      video: null,
    };
    const outcome = await connector.publish(input('alt', media));
    expect(outcome.ok).toBe(true);
    const creates = running.sim.requests.filter((r) => r.path.endsWith('/media'));
    expect(creates[0]?.body).toEqual({
      image_url: 'https://cdn.example/a.jpg',
      is_carousel_item: 'true',
      alt_text: 'a dog',
    });
    const single = await connector.publish(
      input('one', { images: [{ url: 'https://cdn.example/c.jpg', altText: 'c' }], video: null }),
    );
    expect(single.ok).toBe(true);
    expect(running.sim.requests.filter((r) => r.path.endsWith('/media')).at(-1)?.body).toMatchObject({
      alt_text: 'c',
    });
  });

  it('refuses an expired Graph API version (code 2635); the connector does not retry it', async () => {
    const outdated = createInstagramConnector({ baseUrl: running.baseUrls.instagram, apiVersion: 'v20.0' });
    const outcome = await outdated.publish(input('old'));
    expect(outcome.ok ? null : outcome.failure).toMatchObject({ kind: 'rejected', status: 400 });
    expect(outcome.ok ? null : outcome.failure.body).toContain('"code":2635');
    expect(running.sim.postsOf('instagram')).toHaveLength(0);
  });

  it('refuses to publish a container that is not FINISHED (9007/2207027), classified transient', async () => {
    const api = got.extend({
      prefixUrl: `${running.baseUrls.instagram}/${V}`,
      headers: { authorization: 'Bearer ig-token' },
      retry: { limit: 0 },
      responseType: 'json',
    });
    const { id } = await api
      .post(`${account.externalId}/media`, {
        form: { media_type: 'REELS', video_url: 'https://cdn.example/v.mp4' },
      })
      .json<{ id: string }>();
    const error = await api.post(`${account.externalId}/media_publish`, { form: { creation_id: id } }).then(
      () => null,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(HTTPError);
    const body = (error as HTTPError).response.body as { error: unknown };
    expect(body.error).toMatchObject({
      code: 9007,
      error_subcode: 2207027,
      message: 'Media ID is not available',
    });
    expect(classifyGraphError(error, 'Instagram', []).kind).toBe('transient');
    expect(running.sim.postsOf('instagram')).toHaveLength(0);
  });

  it('refuses a carousel of more than ten items', async () => {
    const api = got.extend({
      prefixUrl: `${running.baseUrls.instagram}/${V}`,
      headers: { authorization: 'Bearer ig-token' },
      retry: { limit: 0 },
      throwHttpErrors: false,
    });
    const ids: string[] = [];
    for (let i = 0; i < 11; i += 1) {
      const { id } = await api
        .post(`${account.externalId}/media`, {
          form: { image_url: `https://cdn.example/${i}.jpg`, is_carousel_item: 'true' },
        })
        .json<{ id: string }>();
      ids.push(id);
    }
    const res = await api.post(`${account.externalId}/media`, {
      form: { media_type: 'CAROUSEL', children: ids.join(',') },
    });
    expect(res.statusCode).toBe(400);
    expect(JSON.parse(res.body).error).toMatchObject({ code: 100 });
  });

  it('has no delete (the Graph API cannot delete media)', () => {
    expect(connector.delete).toBeUndefined();
  });
});
