import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { startNetworkSim, type TRunningSim } from '@sps/network-sim';
import type { TConnectorAccount, TMedia, TNetworkConnector, TPublishInput } from '../src/connector.js';
import { createTelegramConnector } from '../src/telegram.connector.js';

const TOKEN = '123456:AA-sim_token';
const account: TConnectorAccount = {
  id: 'acc-tg',
  platform: 'telegram',
  accountName: 'sps_bot',
  externalId: '@sps_news',
  instanceUrl: null,
  token: TOKEN,
};
const image = (n: number) => ({ url: `https://cdn.example/${n}.jpg` });

function input(text: string, media: TMedia | null = null, target = account): TPublishInput {
  return { account: target, text, media, replyTo: null, root: null, idempotencyKey: `k-${text}` };
}

let running: TRunningSim;
let connector: TNetworkConnector;

beforeAll(async () => {
  running = await startNetworkSim();
  connector = createTelegramConnector({ baseUrl: running.baseUrls.telegram, timeoutMs: 2000 });
});
afterAll(() => running.close());
beforeEach(() => running.sim.reset());

const last = () => running.sim.requests.at(-1);

describe('Telegram connector', () => {
  it('sends a text with sendMessage and links the public channel post', async () => {
    const outcome = await connector.publish(input('news'));
    if (!outcome.ok) throw new Error(outcome.failure.message);
    expect(last()?.path).toBe(`/telegram/bot${TOKEN}/sendMessage`);
    expect(last()?.body).toEqual({ chat_id: '@sps_news', text: 'news' });
    expect(outcome.url).toBe(`https://t.me/sps_news/${outcome.remoteId}`);
    expect(outcome.meta).toEqual({ chatId: expect.stringMatching(/^-100\d+$/) });
  });

  it('links private supergroup posts with t.me/c and private chats with no URL', async () => {
    const group = await connector.publish(input('hi group', null, { ...account, externalId: '-1001234567' }));
    expect(group.ok ? group.url : null).toMatch(/^https:\/\/t\.me\/c\/1234567\/\d+$/);
    const dm = await connector.publish(input('hi you', null, { ...account, externalId: '4242' }));
    expect(dm.ok ? dm.url : null).toBe('');
  });

  it('sends one image with sendPhoto and one video with sendVideo, text as caption', async () => {
    await connector.publish(input('pic', { images: [image(1)], video: null }));
    expect(last()?.path).toMatch(/\/sendPhoto$/);
    expect(last()?.body).toEqual({
      chat_id: '@sps_news',
      photo: 'https://cdn.example/1.jpg',
      caption: 'pic',
    });
    await connector.publish(input('clip', { images: [], video: { url: 'https://cdn.example/v.mp4' } }));
    expect(last()?.path).toMatch(/\/sendVideo$/);
    expect(last()?.body).toEqual({
      chat_id: '@sps_news',
      video: 'https://cdn.example/v.mp4',
      caption: 'clip',
    });
  });

  it('sends several images as a media group with the caption on the first', async () => {
    const outcome = await connector.publish(
      input('album', { images: [image(1), image(2), image(3)], video: null }),
    );
    if (!outcome.ok) throw new Error(outcome.failure.message);
    expect(last()?.path).toMatch(/\/sendMediaGroup$/);
    expect(last()?.body).toEqual({
      chat_id: '@sps_news',
      media: [
        { type: 'photo', media: 'https://cdn.example/1.jpg', caption: 'album' },
        { type: 'photo', media: 'https://cdn.example/2.jpg' },
        { type: 'photo', media: 'https://cdn.example/3.jpg' },
      ],
    });
    expect(outcome.meta?.messageIds?.split(',')).toHaveLength(3);
    expect(outcome.meta?.messageIds?.startsWith(outcome.remoteId)).toBe(true);
  });

  it('sends a text over the caption limit as one message previewing the image', async () => {
    const long = 'x'.repeat(1500);
    const outcome = await connector.publish(input(long, { images: [image(1), image(2)], video: null }));
    expect(outcome.ok).toBe(true);
    expect(last()?.path).toMatch(/\/sendMessage$/);
    expect(last()?.body).toMatchObject({
      text: long,
      link_preview_options: {
        url: 'https://cdn.example/1.jpg',
        prefer_large_media: true,
        show_above_text: true,
      },
    });
  });

  it('rejects a missing chat id or more than ten media without calling Telegram', async () => {
    const noChat = await connector.publish(input('x', null, { ...account, externalId: null }));
    expect(noChat.ok ? null : noChat.failure.kind).toBe('rejected');
    const many = await connector.publish(
      input('x', { images: Array.from({ length: 11 }, (_, i) => image(i)), video: null }),
    );
    expect(many.ok ? null : many.failure.kind).toBe('rejected');
    expect(running.sim.requests).toHaveLength(0);
  });

  it('maps 401 to auth_expired without leaking the token', async () => {
    running.sim.addFault({ platform: 'telegram', kind: 'auth_expired', remaining: 1 });
    const outcome = await connector.publish(input('expired'));
    if (outcome.ok) throw new Error('expected failure');
    expect(outcome.failure).toMatchObject({ kind: 'auth_expired', status: 401 });
    expect(outcome.failure.message).toMatch(/Reconnect the Telegram account/);
    expect(JSON.stringify(outcome.failure)).not.toContain(TOKEN);
  });

  it('maps 429 to rate_limited using parameters.retry_after', async () => {
    running.sim.addFault({ platform: 'telegram', kind: 'rate_limited', remaining: 1, retryAfterSeconds: 7 });
    const outcome = await connector.publish(input('busy'));
    expect(outcome.ok ? null : outcome.failure).toMatchObject({
      kind: 'rate_limited',
      status: 429,
      retryAfterMs: 7000,
    });
  });

  it('maps 5xx to transient and 400 to rejected', async () => {
    running.sim.addFault({ platform: 'telegram', kind: 'server_error', remaining: 1 });
    const down = await connector.publish(input('down'));
    expect(down.ok ? null : down.failure).toMatchObject({ kind: 'transient', status: 500 });
    const bad = await connector.publish(input('nowhere', null, { ...account, externalId: 'not-a-chat' }));
    expect(bad.ok ? null : bad.failure).toMatchObject({ kind: 'rejected', status: 400 });
    expect(bad.ok ? null : bad.failure.body).toContain('chat not found');
  });

  it('reports a send that never answers as transient with outcome unknown', async () => {
    const quick = createTelegramConnector({ baseUrl: running.baseUrls.telegram, timeoutMs: 300 });
    running.sim.addFault({ platform: 'telegram', kind: 'hang_after_create', remaining: 1 });
    const outcome = await quick.publish(input('lost answer'));
    expect(outcome.ok ? null : outcome.failure).toMatchObject({ kind: 'transient', outcomeUnknown: true });
    expect(running.sim.postsOf('telegram')).toHaveLength(1);
  });

  it('deletes a message, and treats "message to delete not found" as done', async () => {
    const outcome = await connector.publish(input('oops'));
    if (!outcome.ok) throw new Error(outcome.failure.message);
    const remote = { remoteId: outcome.remoteId, ...(outcome.meta ? { meta: outcome.meta } : {}) };
    expect(await connector.delete?.(account, remote)).toEqual({ ok: true });
    expect(last()?.path).toMatch(/\/deleteMessage$/);
    expect(last()?.body).toEqual({ chat_id: outcome.meta?.chatId, message_id: Number(outcome.remoteId) });
    expect(running.sim.getPost('telegram', outcome.remoteId)?.deleted).toBe(true);
    expect(await connector.delete?.(account, remote)).toEqual({ ok: true });
    running.sim.addFault({ platform: 'telegram', kind: 'auth_expired', remaining: 1 });
    const failed = await connector.delete?.(account, remote);
    expect(failed?.ok ? null : failed?.failure.kind).toBe('auth_expired');
  });

  it('deletes every message of an album with deleteMessages', async () => {
    const outcome = await connector.publish(input('album', { images: [image(1), image(2)], video: null }));
    if (!outcome.ok) throw new Error(outcome.failure.message);
    expect(
      await connector.delete?.(account, {
        remoteId: outcome.remoteId,
        ...(outcome.meta ? { meta: outcome.meta } : {}),
      }),
    ).toEqual({
      ok: true,
    });
    expect(last()?.path).toMatch(/\/deleteMessages$/);
    expect(running.sim.postsOf('telegram').every((p) => p.deleted)).toBe(true);
  });
});
