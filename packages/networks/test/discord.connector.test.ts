import { beforeAll, describe, expect, it } from '@jest/globals';
import type { TConnectorAccount, TMedia, TNetworkConnector, TPublishInput } from '../src/connector.js';
import { createDiscordConnector } from '../src/discord.connector.js';
import { createMediaFetcher } from '../src/media-fetch.js';
import { mp4, PNG_1X1, useSimAndMedia } from './media-server.js';

const GUILD = '900000000000000001';
const account: TConnectorAccount = {
  id: 'acc-dc',
  platform: 'discord',
  accountName: 'sps-bot',
  externalId: '1100000000000000042',
  instanceUrl: null,
  token: 'dc-bot-token',
};

function input(text: string, media: TMedia | null = null, key = `k-${text}`): TPublishInput {
  return { account, text, media, replyTo: null, root: null, idempotencyKey: key };
}

const env = useSimAndMedia({
  '/a.png': ['image/png', PNG_1X1],
  '/b.png': ['image/png', PNG_1X1],
  '/v.mp4': ['video/mp4', mp4(5, 2048)],
  '/huge.mp4': ['video/mp4', mp4(5, 11 * 1024 * 1024)],
});
let connector: TNetworkConnector;

beforeAll(() => {
  connector = createDiscordConnector({
    baseUrl: env.running.baseUrls.discord,
    timeoutMs: 5000,
    fetchMedia: createMediaFetcher({ allowPrivate: true }),
  });
});

const created = () => env.running.sim.requests.find((r) => r.method === 'POST');

describe('Discord connector', () => {
  it('creates a message with the bot token and a nonce, returning the jump link', async () => {
    const outcome = await connector.publish(input('hello server'));
    if (!outcome.ok) throw new Error(outcome.failure.message);
    expect(created()?.path).toBe(`/discord/channels/${account.externalId}/messages`);
    expect(created()?.headers.authorization).toBe('Bot dc-bot-token');
    expect(created()?.body).toEqual({
      content: 'hello server',
      nonce: expect.any(String),
      enforce_nonce: true,
    });
    expect((created()?.body as { nonce?: string } | undefined)?.nonce?.length).toBeLessThanOrEqual(25);
    expect(outcome.url).toBe(
      `https://discord.com/channels/${GUILD}/${account.externalId}/${outcome.remoteId}`,
    );
    expect(outcome.meta).toEqual({ channelId: account.externalId });
  });

  it('looks the guild up once per channel and uses @me for direct messages', async () => {
    const fresh = createDiscordConnector({ baseUrl: env.running.baseUrls.discord, timeoutMs: 2000 });
    await fresh.publish(input('one'));
    await fresh.publish(input('two'));
    expect(env.running.sim.requests.filter((r) => r.method === 'GET')).toHaveLength(1);
    const dm = await fresh.publish({ ...input('psst'), account: { ...account, externalId: 'dm-77' } });
    expect(dm.ok ? dm.url : null).toMatch(/^https:\/\/discord\.com\/channels\/@me\/dm-77\/\d+$/);
  });

  it('sends images as attachments (files[n] with payload_json) with alt text as their description', async () => {
    const images: TMedia = {
      images: [{ url: env.media.url('/a.png'), altText: 'a red dot' }, { url: env.media.url('/b.png') }],
      video: null,
    };
    const outcome = await connector.publish(input('look', images));
    if (!outcome.ok) throw new Error(outcome.failure.message);
    expect(String(created()?.headers['content-type'])).toMatch(/^multipart\/form-data/);
    const post = env.running.sim.getPost('discord', outcome.remoteId);
    expect(post?.text).toBe('look');
    expect(post?.media).toEqual([
      {
        id: '0',
        filename: 'a.png',
        description: 'a red dot',
        content_type: 'image/png',
        size: PNG_1X1.length,
      },
      { id: '1', filename: 'b.png', content_type: 'image/png', size: PNG_1X1.length },
    ]);
  });

  it('attaches a video instead of appending its link, so the text sent is the text checked', async () => {
    const text = 'v'.repeat(2000);
    const outcome = await connector.publish(
      input(text, { images: [], video: { url: env.media.url('/v.mp4') } }),
    );
    if (!outcome.ok) throw new Error(outcome.failure.message);
    const post = env.running.sim.getPost('discord', outcome.remoteId);
    expect(post?.text).toBe(text);
    expect(post?.media).toEqual([{ id: '0', filename: 'v.mp4', content_type: 'video/mp4', size: 2048 }]);
  });

  it('refuses text over 2000 characters and a video over the 10 MiB upload limit before posting', async () => {
    const long = await connector.publish(input('x'.repeat(2001)));
    expect(long.ok ? null : long.failure.kind).toBe('rejected');
    const huge = await connector.publish(
      input('big', { images: [], video: { url: env.media.url('/huge.mp4') } }),
    );
    expect(huge.ok ? null : huge.failure.kind).toBe('rejected');
    expect(huge.ok ? '' : huge.failure.message).toMatch(/too large|larger/i);
    expect(env.running.sim.requests).toHaveLength(0);
  });

  it('does not post twice when a segment is retried with the same idempotency key', async () => {
    const first = await connector.publish(input('once', null, 'same-key'));
    const second = await connector.publish(input('once', null, 'same-key'));
    expect(first.ok && second.ok && first.remoteId === second.remoteId).toBe(true);
    expect(env.running.sim.postsOf('discord')).toHaveLength(1);
  });

  it('rejects an account without a channel id or with too many images', async () => {
    const noChannel = await connector.publish({ ...input('x'), account: { ...account, externalId: null } });
    expect(noChannel.ok ? null : noChannel.failure.kind).toBe('rejected');
    const images = Array.from({ length: 11 }, (_, i) => ({ url: `https://cdn.example/${i}.png` }));
    const tooMany = await connector.publish(input('x', { images, video: null }));
    expect(tooMany.ok ? null : tooMany.failure.kind).toBe('rejected');
    expect(env.running.sim.requests).toHaveLength(0);
  });

  it('maps 401 to auth_expired', async () => {
    env.running.sim.addFault({ platform: 'discord', kind: 'auth_expired', remaining: 1 });
    const outcome = await connector.publish(input('expired'));
    if (outcome.ok) throw new Error('expected failure');
    expect(outcome.failure).toMatchObject({ kind: 'auth_expired', status: 401 });
    expect(outcome.failure.message).toMatch(/Reconnect the Discord account/);
  });

  it('maps 429 to rate_limited using the retry_after of the body', async () => {
    env.running.sim.addFault({
      platform: 'discord',
      kind: 'rate_limited',
      remaining: 1,
      retryAfterSeconds: 7,
    });
    const outcome = await connector.publish(input('busy'));
    expect(outcome.ok ? null : outcome.failure).toMatchObject({ kind: 'rate_limited', retryAfterMs: 7000 });
  });

  it('maps 5xx to transient and 400 to rejected', async () => {
    env.running.sim.addFault({ platform: 'discord', kind: 'server_error', remaining: 1 });
    const down = await connector.publish(input('down'));
    expect(down.ok ? null : down.failure).toMatchObject({ kind: 'transient', status: 503 });
    const empty = await connector.publish(input(''));
    expect(empty.ok ? null : empty.failure).toMatchObject({ kind: 'rejected', status: 400 });
  });

  it('reports a create that never answers as transient with outcome unknown', async () => {
    const quick = createDiscordConnector({ baseUrl: env.running.baseUrls.discord, timeoutMs: 300 });
    env.running.sim.addFault({ platform: 'discord', kind: 'hang_after_create', remaining: 1 });
    const outcome = await quick.publish(input('lost answer'));
    expect(outcome.ok ? null : outcome.failure).toMatchObject({ kind: 'transient', outcomeUnknown: true });
    expect(env.running.sim.postsOf('discord')).toHaveLength(1);
  });

  it('deletes a message, and treats an unknown message as already deleted', async () => {
    const outcome = await connector.publish(input('oops'));
    if (!outcome.ok) throw new Error(outcome.failure.message);
    const remote = { remoteId: outcome.remoteId, ...(outcome.meta ? { meta: outcome.meta } : {}) };
    expect(await connector.delete?.(account, remote)).toEqual({ ok: true });
    expect(env.running.sim.requests.at(-1)?.path).toBe(
      `/discord/channels/${account.externalId}/messages/${outcome.remoteId}`,
    );
    expect(env.running.sim.getPost('discord', outcome.remoteId)?.deleted).toBe(true);
    expect(await connector.delete?.(account, remote)).toEqual({ ok: true });
    env.running.sim.addFault({ platform: 'discord', kind: 'auth_expired', remaining: 1 });
    const failed = await connector.delete?.(account, remote);
    expect(failed?.ok ? null : failed?.failure.kind).toBe('auth_expired');
  });
});
