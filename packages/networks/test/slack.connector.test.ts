import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { startNetworkSim, type TRunningSim } from '@sps/network-sim';
import type { TConnectorAccount, TMedia, TNetworkConnector, TPublishInput } from '../src/connector.js';
import { createSlackConnector } from '../src/slack.connector.js';

const account: TConnectorAccount = {
  id: 'acc-sl',
  platform: 'slack',
  accountName: 'sps-workspace',
  externalId: 'C0123456789',
  instanceUrl: null,
  token: 'xoxb-sim-token',
};

function input(text: string, media: TMedia | null = null): TPublishInput {
  return { account, text, media, replyTo: null, root: null, idempotencyKey: `k-${text}` };
}

let running: TRunningSim;
let connector: TNetworkConnector;

beforeAll(async () => {
  running = await startNetworkSim();
  connector = createSlackConnector({ baseUrl: running.baseUrls.slack, timeoutMs: 2000 });
});
afterAll(() => running.close());
beforeEach(() => running.sim.reset());

const posted = () => running.sim.requests.find((r) => r.path.endsWith('/chat.postMessage'));

describe('Slack connector', () => {
  it('posts with chat.postMessage and returns the permalink', async () => {
    const outcome = await connector.publish(input('*deploy* done'));
    if (!outcome.ok) throw new Error(outcome.failure.message);
    expect(posted()?.headers.authorization).toBe('Bearer xoxb-sim-token');
    expect(posted()?.body).toEqual({ channel: 'C0123456789', text: '*deploy* done' });
    expect(outcome.remoteId).toMatch(/^\d+\.\d{6}$/);
    expect(outcome.url).toBe(
      `https://sps-sim.slack.com/archives/C0123456789/p${outcome.remoteId.replace('.', '')}`,
    );
    expect(outcome.meta).toEqual({ channel: 'C0123456789' });
  });

  it('sends images as image blocks, keeping the text in a section', async () => {
    const media: TMedia = {
      images: [{ url: 'https://cdn.example/a.png', altText: 'chart' }, { url: 'https://cdn.example/b.png' }],
      video: { url: 'https://cdn.example/v.mp4' },
    };
    const outcome = await connector.publish(input('numbers', media));
    expect(outcome.ok).toBe(true);
    expect(posted()?.body).toEqual({
      channel: 'C0123456789',
      text: 'numbers',
      blocks: [
        { type: 'section', text: { type: 'mrkdwn', text: 'numbers' } },
        { type: 'image', image_url: 'https://cdn.example/a.png', alt_text: 'chart' },
        { type: 'image', image_url: 'https://cdn.example/b.png', alt_text: 'image' },
        { type: 'section', text: { type: 'mrkdwn', text: '<https://cdn.example/v.mp4>' } },
      ],
    });
  });

  it('falls back to a constructed link when the permalink lookup fails', async () => {
    running.sim.addFault({
      platform: 'slack',
      kind: 'server_error',
      remaining: 1,
      pathIncludes: 'getPermalink',
    });
    const outcome = await connector.publish(input('still posted'));
    if (!outcome.ok) throw new Error(outcome.failure.message);
    expect(outcome.url).toBe(`https://slack.com/archives/C0123456789/p${outcome.remoteId.replace('.', '')}`);
  });

  it.each(['token_expired', 'not_authed'])('maps ok:false %s to auth_expired', async (code) => {
    if (code === 'token_expired')
      running.sim.addFault({ platform: 'slack', kind: 'auth_expired', remaining: 1 });
    const account2 = code === 'not_authed' ? { ...account, token: '' } : account;
    const outcome = await connector.publish({ ...input('expired'), account: account2 });
    if (outcome.ok) throw new Error('expected failure');
    expect(outcome.failure).toMatchObject({ kind: 'auth_expired', status: 200 });
    expect(outcome.failure.body).toContain(code);
    expect(outcome.failure.message).toMatch(/Reconnect the Slack account/);
  });

  it('maps 429 ratelimited to rate_limited with Retry-After', async () => {
    running.sim.addFault({ platform: 'slack', kind: 'rate_limited', remaining: 1, retryAfterSeconds: 7 });
    const outcome = await connector.publish(input('busy'));
    expect(outcome.ok ? null : outcome.failure).toMatchObject({
      kind: 'rate_limited',
      status: 429,
      retryAfterMs: 7000,
    });
  });

  it('maps 5xx to transient and ok:false errors to rejected', async () => {
    running.sim.addFault({ platform: 'slack', kind: 'server_error', remaining: 1 });
    const down = await connector.publish(input('down'));
    expect(down.ok ? null : down.failure).toMatchObject({ kind: 'transient', status: 503 });
    running.sim.addFault({ platform: 'slack', kind: 'rejected', remaining: 1 });
    const bad = await connector.publish(input('bad'));
    expect(bad.ok ? null : bad.failure).toMatchObject({ kind: 'rejected', status: 200 });
    expect(bad.ok ? null : bad.failure.message).toContain('invalid_blocks');
    const unknown = await connector.publish({
      ...input('where'),
      account: { ...account, externalId: 'general' },
    });
    expect(unknown.ok ? null : unknown.failure.message).toContain('channel_not_found');
  });

  it('reports a post that never answers as transient with outcome unknown', async () => {
    const quick = createSlackConnector({ baseUrl: running.baseUrls.slack, timeoutMs: 300 });
    running.sim.addFault({ platform: 'slack', kind: 'hang_after_create', remaining: 1 });
    const outcome = await quick.publish(input('lost answer'));
    expect(outcome.ok ? null : outcome.failure).toMatchObject({ kind: 'transient', outcomeUnknown: true });
    expect(running.sim.postsOf('slack')).toHaveLength(1);
  });

  it('deletes with chat.delete, treating message_not_found as done', async () => {
    const outcome = await connector.publish(input('oops'));
    if (!outcome.ok) throw new Error(outcome.failure.message);
    const remote = { remoteId: outcome.remoteId, ...(outcome.meta ? { meta: outcome.meta } : {}) };
    expect(await connector.delete?.(account, remote)).toEqual({ ok: true });
    expect(running.sim.requests.at(-1)?.body).toEqual({ channel: 'C0123456789', ts: outcome.remoteId });
    expect(running.sim.getPost('slack', outcome.remoteId)?.deleted).toBe(true);
    expect(await connector.delete?.(account, remote)).toEqual({ ok: true });
    running.sim.addFault({ platform: 'slack', kind: 'auth_expired', remaining: 1 });
    const failed = await connector.delete?.(account, remote);
    expect(failed?.ok ? null : failed?.failure.kind).toBe('auth_expired');
  });
});
