import { beforeAll, describe, expect, it } from '@jest/globals';
import type { TConnectorAccount, TMedia, TNetworkConnector, TPublishInput } from '../src/connector.js';
import { createMediaFetcher } from '../src/media-fetch.js';
import { createSlackConnector } from '../src/slack.connector.js';
import { mp4, PNG_1X1, useSimAndMedia } from './media-server.js';

const account: TConnectorAccount = {
  id: 'acc-sl',
  platform: 'slack',
  accountName: 'sps-workspace',
  externalId: 'C0123456789',
  instanceUrl: null,
  token: 'xoxb-sim-token',
};

function input(text: string, media: TMedia | null = null, extra: Partial<TPublishInput> = {}): TPublishInput {
  return { account, text, media, replyTo: null, root: null, idempotencyKey: `k-${text}`, ...extra };
}

const env = useSimAndMedia({
  '/chart.png': ['image/png', PNG_1X1],
  '/clip.mp4': ['video/mp4', mp4(4, 3000)],
});
let connector: TNetworkConnector;

beforeAll(() => {
  connector = createSlackConnector({
    baseUrl: env.running.baseUrls.slack,
    timeoutMs: 5000,
    fetchMedia: createMediaFetcher({ allowPrivate: true }),
    processingWait: { intervalMs: 5, maxWaitMs: 500 },
  });
});

const posted = () => env.running.sim.requests.find((r) => r.path.endsWith('/chat.postMessage'));

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

  it('uploads media with getUploadURLExternal, the upload URL and completeUploadExternal, then finds the message ts', async () => {
    const files: TMedia = {
      images: [{ url: env.media.url('/chart.png'), altText: 'chart' }],
      video: null,
    };
    // A direct call (no progress kept): the share is checked in the call, as the blocking wait did.
    const outcome = await connector.publish(input('numbers', files));
    if (!outcome.ok) throw new Error(outcome.failure.message);
    const paths = env.running.sim.requests.map((r) => r.path.replace(/__upload\/\w+/, '__upload'));
    expect(paths.slice(0, 3)).toEqual([
      '/slack/files.getUploadURLExternal',
      '/slack/__upload',
      '/slack/files.completeUploadExternal',
    ]);
    // files.info is asked until the share shows (the simulator shows it on the second check).
    expect(paths.filter((p) => p.startsWith('/slack/files.info'))).toHaveLength(2);
    expect(env.running.sim.requests[0]?.body).toEqual({
      filename: 'chart.png',
      length: String(PNG_1X1.length),
      alt_txt: 'chart',
    });
    expect(env.running.sim.requests[2]?.body).toMatchObject({
      channel_id: 'C0123456789',
      initial_comment: 'numbers',
    });
    const post = env.running.sim.getPost('slack', outcome.remoteId);
    expect(post?.text).toBe('numbers');
    expect(post?.media).toEqual([
      expect.objectContaining({ name: 'chart.png', type: 'image/png', bytes: PNG_1X1.length, alt: 'chart' }),
    ]);
    expect(posted()).toBeUndefined();
  });

  it('uploads a video as a file and deletes the message and its files together', async () => {
    const outcome = await connector.publish(
      input('watch', { images: [], video: { url: env.media.url('/clip.mp4') } }),
    );
    if (!outcome.ok) throw new Error(outcome.failure.message);
    expect(env.running.sim.getPost('slack', outcome.remoteId)?.media).toEqual([
      expect.objectContaining({ name: 'clip.mp4', type: 'video/mp4', bytes: 3000 }),
    ]);
    const remote = { remoteId: outcome.remoteId, ...(outcome.meta ? { meta: outcome.meta } : {}) };
    expect(await connector.delete?.(account, remote)).toEqual({ ok: true });
    expect(env.running.sim.requests.some((r) => r.path === '/slack/files.delete')).toBe(true);
  });

  it('with kept progress, answers pending while Slack completes the share and finds the message on a later call, shared once', async () => {
    // The simulator holds the share out of files.info until told otherwise.
    env.running.sim.processingMs.slack = 60 * 60_000;
    const progress = {
      saved: null as Record<string, string> | null,
      save: async (state: Record<string, string> | null) => {
        progress.saved = state;
      },
    };
    const args = input(
      'shared later',
      { images: [{ url: env.media.url('/chart.png') }], video: null },
      { progress },
    );
    // Each call while the share is pending is one files.info read, never a sleep in the call.
    for (let call = 0; call < 3; call += 1) {
      const outcome = await connector.publish(args);
      expect(outcome.ok ? null : (outcome.pending ?? outcome.failure)).toEqual({ checkAfterMs: 5 });
    }
    // Saved right after the completion (the message exists): later calls only look for its ts.
    expect(progress.saved).toEqual({
      sharedFile: expect.stringMatching(/^F/),
      fileIds: expect.stringMatching(/^F/),
      sharedAt: expect.any(String),
      waitSince: expect.any(String),
    });
    env.running.sim.processingMs.slack = 0;
    let outcome = await connector.publish(args);
    for (let calls = 1; !outcome.ok && outcome.pending && calls < 20; calls += 1) {
      outcome = await connector.publish(args);
    }
    if (!outcome.ok) throw new Error(outcome.failure.message);
    expect(env.running.sim.getPost('slack', outcome.remoteId)?.text).toBe('shared later');
    expect(outcome.meta).toEqual({ channel: 'C0123456789', fileIds: progress.saved?.fileIds });
    const calls = (method: string) => env.running.sim.requests.filter((r) => r.path.endsWith(method)).length;
    expect([calls('files.getUploadURLExternal'), calls('files.completeUploadExternal')]).toEqual([1, 1]);
    expect(env.running.sim.postsOf('slack')).toHaveLength(1);
  });

  it('resumes a shared upload by its saved file id instead of sharing again', async () => {
    const store = {
      saved: null as Record<string, string> | null,
      save: async (s: Record<string, string> | null) => {
        store.saved = s;
      },
    };
    const impatient = createSlackConnector({
      baseUrl: env.running.baseUrls.slack,
      fetchMedia: createMediaFetcher({ allowPrivate: true }),
      processingWait: { intervalMs: 5, maxWaitMs: 0 },
    });
    // A bot without channels:history: the message is not found in the channel's history either.
    const noHistory = { ...account, token: 'xoxb-nohistory' };
    const first = await impatient.publish(
      input(
        'later',
        { images: [{ url: env.media.url('/chart.png') }], video: null },
        { progress: store, account: noHistory },
      ),
    );
    expect(first.ok ? null : first.failure.kind).toBe('transient');
    expect(store.saved?.sharedFile).toMatch(/^F/);
    // Past the deadline the start is dropped: the retry looks for the ts in a wait of its own.
    expect(store.saved?.waitSince).toBeUndefined();
    const second = await connector.publish(
      input('later', { images: [{ url: env.media.url('/chart.png') }], video: null }, { progress: store }),
    );
    if (!second.ok) throw new Error(second.failure.message);
    expect(
      env.running.sim.requests.filter((r) => r.path.endsWith('files.completeUploadExternal')),
    ).toHaveLength(1);
    expect(env.running.sim.postsOf('slack')).toHaveLength(1);
  });

  it('posts a thread reply under the first message with thread_ts, and refuses text over 40,000 characters', async () => {
    const head = await connector.publish(input('head'));
    if (!head.ok) throw new Error(head.failure.message);
    const reply = await connector.publish(
      input('reply', null, { replyTo: { remoteId: head.remoteId }, root: { remoteId: head.remoteId } }),
    );
    if (!reply.ok) throw new Error(reply.failure.message);
    expect(env.running.sim.getPost('slack', reply.remoteId)?.replyTo).toBe(head.remoteId);
    const long = await connector.publish(input('x'.repeat(40_001)));
    expect(long.ok ? null : long.failure.kind).toBe('rejected');
  });

  it('falls back to a constructed link when the permalink lookup fails', async () => {
    env.running.sim.addFault({
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
      env.running.sim.addFault({ platform: 'slack', kind: 'auth_expired', remaining: 1 });
    const account2 = code === 'not_authed' ? { ...account, token: '' } : account;
    const outcome = await connector.publish({ ...input('expired'), account: account2 });
    if (outcome.ok) throw new Error('expected failure');
    expect(outcome.failure).toMatchObject({ kind: 'auth_expired', status: 200 });
    expect(outcome.failure.body).toContain(code);
    expect(outcome.failure.message).toMatch(/Reconnect the Slack account/);
  });

  it('maps 429 ratelimited to rate_limited with Retry-After', async () => {
    env.running.sim.addFault({ platform: 'slack', kind: 'rate_limited', remaining: 1, retryAfterSeconds: 7 });
    const outcome = await connector.publish(input('busy'));
    expect(outcome.ok ? null : outcome.failure).toMatchObject({
      kind: 'rate_limited',
      status: 429,
      retryAfterMs: 7000,
    });
  });

  it('maps 5xx to transient and ok:false errors to rejected', async () => {
    env.running.sim.addFault({ platform: 'slack', kind: 'server_error', remaining: 1 });
    const down = await connector.publish(input('down'));
    expect(down.ok ? null : down.failure).toMatchObject({ kind: 'transient', status: 503 });
    env.running.sim.addFault({ platform: 'slack', kind: 'rejected', remaining: 1 });
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
    const quick = createSlackConnector({ baseUrl: env.running.baseUrls.slack, timeoutMs: 300 });
    env.running.sim.addFault({ platform: 'slack', kind: 'hang_after_create', remaining: 1 });
    const outcome = await quick.publish(input('lost answer'));
    expect(outcome.ok ? null : outcome.failure).toMatchObject({ kind: 'transient', outcomeUnknown: true });
    expect(env.running.sim.postsOf('slack')).toHaveLength(1);
  });

  it('deletes with chat.delete, treating message_not_found as done', async () => {
    const outcome = await connector.publish(input('oops'));
    if (!outcome.ok) throw new Error(outcome.failure.message);
    const remote = { remoteId: outcome.remoteId, ...(outcome.meta ? { meta: outcome.meta } : {}) };
    expect(await connector.delete?.(account, remote)).toEqual({ ok: true });
    expect(env.running.sim.requests.at(-1)?.body).toEqual({ channel: 'C0123456789', ts: outcome.remoteId });
    expect(env.running.sim.getPost('slack', outcome.remoteId)?.deleted).toBe(true);
    expect(await connector.delete?.(account, remote)).toEqual({ ok: true });
    env.running.sim.addFault({ platform: 'slack', kind: 'auth_expired', remaining: 1 });
    const failed = await connector.delete?.(account, remote);
    expect(failed?.ok ? null : failed?.failure.kind).toBe('auth_expired');
  });
});
