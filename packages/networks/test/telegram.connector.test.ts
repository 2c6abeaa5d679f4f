import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { startNetworkSim, type TRunningSim } from '@sps/network-sim';
import type { TConnectorAccount, TMedia, TNetworkConnector, TPublishInput } from '../src/connector.js';
import { createMediaFetcher } from '../src/media-fetch.js';
import { createTelegramConnector } from '../src/telegram.connector.js';
import { JPEG_BYTES, mp4, startMediaServer, type TMediaServer } from './media-server.js';

const TOKEN = '123456:AA-sim_token';
const account: TConnectorAccount = {
  id: 'acc-tg',
  platform: 'telegram',
  accountName: 'sps_bot',
  externalId: '@sps_news',
  instanceUrl: null,
  token: TOKEN,
};
let media: TMediaServer;
const image = (n: number) => ({ url: media.url(`/${n}.jpg`) });

function input(
  text: string,
  m: TMedia | null = null,
  target = account,
  extra: Partial<TPublishInput> = {},
): TPublishInput {
  return {
    account: target,
    text,
    media: m,
    replyTo: null,
    root: null,
    idempotencyKey: `k-${text}`,
    ...extra,
  };
}

let running: TRunningSim;
let connector: TNetworkConnector;

beforeAll(async () => {
  running = await startNetworkSim();
  media = await startMediaServer();
  for (let n = 0; n < 12; n += 1) media.set(`/${n}.jpg`, 'image/jpeg', JPEG_BYTES);
  media.set('/v.mp4', 'video/mp4', mp4(3, 4000));
  connector = createTelegramConnector({
    baseUrl: running.baseUrls.telegram,
    timeoutMs: 5000,
    fetchMedia: createMediaFetcher({ allowPrivate: true }),
  });
});
afterAll(async () => {
  await media.close();
  await running.close();
});
beforeEach(() => running.sim.reset());

const last = () => running.sim.requests.at(-1);

describe('Telegram connector', () => {
  it('sends a text with sendMessage and links the public channel post', async () => {
    const outcome = await connector.publish(input('news'));
    if (!outcome.ok) throw new Error(outcome.failure.message);
    expect(last()?.path).toBe(`/telegram/bot${TOKEN}/sendMessage`);
    expect(last()?.body).toEqual({ chat_id: '@sps_news', text: 'news' });
    expect(outcome.url).toBe(`https://t.me/sps_news/${outcome.remoteId}`);
    expect(outcome.meta).toEqual({
      chatId: expect.stringMatching(/^-100\d+$/),
      sentAt: expect.stringMatching(/^\d+$/),
    });
  });

  it('links private supergroup posts with t.me/c and private chats with no URL', async () => {
    const group = await connector.publish(input('hi group', null, { ...account, externalId: '-1001234567' }));
    expect(group.ok ? group.url : null).toMatch(/^https:\/\/t\.me\/c\/1234567\/\d+$/);
    const dm = await connector.publish(input('hi you', null, { ...account, externalId: '4242' }));
    expect(dm.ok ? dm.url : null).toBe('');
  });

  it('uploads one image with sendPhoto and one video with sendVideo as multipart files, text as caption', async () => {
    const photo = await connector.publish(input('pic', { images: [image(1)], video: null }));
    if (!photo.ok) throw new Error(photo.failure.message);
    expect(last()?.path).toMatch(/\/sendPhoto$/);
    expect(String(last()?.headers['content-type'])).toMatch(/^multipart\/form-data/);
    expect(running.sim.getPost('telegram', photo.remoteId)).toMatchObject({
      text: 'pic',
      media: { photo: { bytes: JPEG_BYTES.length, type: 'image/jpeg' } },
    });
    const clip = await connector.publish(input('clip', { images: [], video: { url: media.url('/v.mp4') } }));
    if (!clip.ok) throw new Error(clip.failure.message);
    expect(last()?.path).toMatch(/\/sendVideo$/);
    expect(running.sim.getPost('telegram', clip.remoteId)?.media).toEqual({
      video: { bytes: 4000, type: 'video/mp4', sha256: expect.stringMatching(/^[0-9a-f]{64}$/) },
    });
  });

  it('uploads several images as a media group (attach://) with the caption on the first', async () => {
    const outcome = await connector.publish(
      input('album', { images: [image(1), image(2), image(3)], video: null }),
    );
    if (!outcome.ok) throw new Error(outcome.failure.message);
    expect(last()?.path).toMatch(/\/sendMediaGroup$/);
    const posts = running.sim.postsOf('telegram');
    expect(posts.map((p) => p.text)).toEqual(['album', '', '']);
    expect(
      posts.every((p) => (p.media as { photo?: { bytes: number } }).photo?.bytes === JPEG_BYTES.length),
    ).toBe(true);
    expect(outcome.meta?.messageIds?.split(',')).toHaveLength(3);
    expect(outcome.meta?.messageIds?.startsWith(outcome.remoteId)).toBe(true);
  });

  it('sends a text over the caption limit after the media, as a message replying to them, and resumes after the media', async () => {
    const long = 'x'.repeat(1500);
    const store = {
      saved: null as Record<string, string> | null,
      save: async (state: Record<string, string> | null) => {
        store.saved = state;
      },
    };
    // The text message fails once: the media are sent and saved, the retry sends only the text.
    running.sim.addFault({
      platform: 'telegram',
      kind: 'server_error',
      remaining: 1,
      pathIncludes: 'sendMessage',
    });
    const first = await connector.publish(
      input(long, { images: [image(1), image(2)], video: null }, account, { progress: store }),
    );
    expect(first.ok ? null : first.failure.kind).toBe('transient');
    expect(store.saved?.mediaIds?.split(',')).toHaveLength(2);
    const outcome = await connector.publish(
      input(long, { images: [image(1), image(2)], video: null }, account, { progress: store }),
    );
    if (!outcome.ok) throw new Error(outcome.failure.message);
    const posts = running.sim.postsOf('telegram');
    expect(posts.map((p) => p.text)).toEqual(['', '', long]);
    expect(posts[2]?.replyTo).toBe(posts[0]?.remoteId);
    expect(running.sim.requests.filter((r) => r.path.endsWith('/sendMediaGroup'))).toHaveLength(1);
    expect(outcome.meta?.messageIds?.split(',')).toHaveLength(3);
  });

  it('refuses a text over 4096 characters before calling Telegram', async () => {
    const outcome = await connector.publish(input('y'.repeat(4097)));
    expect(outcome.ok ? null : outcome.failure.kind).toBe('rejected');
    expect(running.sim.requests).toHaveLength(0);
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

  it('reports a delete more than 48 hours after sending as not possible, without asking Telegram', async () => {
    const outcome = await connector.publish(input('too old'));
    if (!outcome.ok) throw new Error(outcome.failure.message);
    expect(Number(outcome.meta?.sentAt)).toBeGreaterThan(0);
    const before = running.sim.requests.length;
    const sentAt = String(Math.floor(Date.now() / 1000) - 49 * 3600);
    const old = await connector.delete?.(account, {
      remoteId: outcome.remoteId,
      meta: { ...outcome.meta, sentAt },
    });
    expect(old?.ok ? null : old?.failure).toMatchObject({
      kind: 'rejected',
      message: expect.stringContaining('within 48 hours'),
    });
    expect(running.sim.requests).toHaveLength(before);
    expect(running.sim.getPost('telegram', outcome.remoteId)?.deleted).toBe(false);
  });

  it('the simulated Telegram refuses deleting a message sent 48 hours ago or more', async () => {
    const outcome = await connector.publish(input('aged'));
    if (!outcome.ok) throw new Error(outcome.failure.message);
    const advance = (seconds: number) =>
      fetch(`${running.url}/__sim/oauth/advance`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ seconds }),
      });
    await advance(48 * 3600 + 60);
    try {
      // A message recorded before the send time was kept (no sentAt): Telegram itself refuses.
      const refused = await connector.delete?.(account, {
        remoteId: outcome.remoteId,
        meta: { chatId: String(outcome.meta?.chatId) },
      });
      expect(refused?.ok ? null : refused?.failure.kind).toBe('rejected');
      expect(last()?.path).toMatch(/\/deleteMessage$/);
      expect(running.sim.getPost('telegram', outcome.remoteId)?.deleted).toBe(false);
    } finally {
      await fetch(`${running.url}/__sim/oauth/reset`, { method: 'POST' });
    }
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
