import { beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type {
  TConnectorAccount,
  TNetworkConnector,
  TPublishInput,
  TPublishOutcome,
  TPublishProgress,
} from '../src/connector.js';
import { createMediaFetcher } from '../src/media-fetch.js';
import { guardPermissions } from '../src/permissions/permission-guard.js';
import { createSlackConnector } from '../src/slack.connector.js';
import { PNG_1X1, useSimAndMedia } from './media-server.js';

// The share never shows in files.info (the simulator's processing time holds it out): the message is
// found in the channel's history by its file id, or the failure says why it could not be.

const account: TConnectorAccount = {
  id: 'acc-sl-share',
  platform: 'slack',
  accountName: 'sps-workspace',
  externalId: 'C0SHARE01',
  instanceUrl: null,
  token: 'xoxb-sim-token',
};

const env = useSimAndMedia({ '/chart.png': ['image/png', PNG_1X1] });
let connector: TNetworkConnector;

beforeAll(() => {
  connector = createSlackConnector({
    baseUrl: env.running.baseUrls.slack,
    timeoutMs: 5000,
    fetchMedia: createMediaFetcher({ allowPrivate: true }),
    processingWait: { intervalMs: 5, maxWaitMs: 60 },
  });
});
// After the simulator's reset (useSimAndMedia's beforeEach runs first).
beforeEach(() => {
  env.running.sim.processingMs.slack = 60 * 60_000;
});

function kept(): TPublishProgress & { saved: Record<string, string> | null } {
  const progress = {
    saved: null as Record<string, string> | null,
    save: async (state: Record<string, string> | null) => {
      progress.saved = state;
    },
  };
  return progress;
}

function input(text: string, extra: Partial<TPublishInput> = {}): TPublishInput {
  const files = { images: [{ url: env.media.url('/chart.png') }], video: null };
  return { account, text, media: files, replyTo: null, root: null, idempotencyKey: `k-${text}`, ...extra };
}

/** Calls as the publisher does while the answer is `pending`. */
async function publishUntilDone(target: TNetworkConnector, args: TPublishInput): Promise<TPublishOutcome> {
  let outcome = await target.publish(args);
  for (let calls = 1; !outcome.ok && outcome.pending && calls < 200; calls += 1) {
    await new Promise((resolve) => setTimeout(resolve, 5));
    outcome = await target.publish(args);
  }
  return outcome;
}

const requestsTo = (method: string) =>
  env.running.sim.requests.filter((r) => r.path.split('?')[0]?.endsWith(`/${method}`));

describe('Slack share found in the channel history', () => {
  it("records the message's ts from conversations.history when files.info never shows the share, shared once", async () => {
    const progress = kept();
    const outcome = await publishUntilDone(connector, input('never shown', { progress }));
    if (!outcome.ok) throw new Error(outcome.failure.message);
    const [post] = env.running.sim.postsOf('slack');
    expect(outcome.remoteId).toBe(post?.remoteId);
    expect(post?.text).toBe('never shown');
    expect(outcome.meta).toEqual({ channel: 'C0SHARE01', fileIds: progress.saved?.fileIds });
    expect(outcome.url).toContain(`/archives/C0SHARE01/p${outcome.remoteId.replace('.', '')}`);
    expect(requestsTo('files.info').length).toBeGreaterThan(1);
    // Read once, after the wait, from shortly before the completion.
    const reads = requestsTo('conversations.history');
    expect(reads).toHaveLength(1);
    const query = new URLSearchParams(reads[0]?.path.split('?')[1]);
    expect(query.get('channel')).toBe('C0SHARE01');
    expect(Number(query.get('oldest'))).toBeLessThan(Number(outcome.remoteId));
    expect(Number(query.get('oldest'))).toBeGreaterThan(Date.now() / 1000 - 10 * 60);
    expect(query.get('limit')).toBe('100');
    expect(requestsTo('files.completeUploadExternal')).toHaveLength(1);
    expect(env.running.sim.postsOf('slack')).toHaveLength(1);
  });

  it('finds it in a direct call too, and takes the message of this file among others', async () => {
    const other = await connector.publish({ ...input('plain'), media: null });
    if (!other.ok) throw new Error(other.failure.message);
    const outcome = await connector.publish(input('direct'));
    if (!outcome.ok) throw new Error(outcome.failure.message);
    expect(env.running.sim.getPost('slack', outcome.remoteId)?.text).toBe('direct');
    expect(outcome.remoteId).not.toBe(other.remoteId);
  });

  it('reads the thread with conversations.replies for a reply with a file', async () => {
    const head = await connector.publish({ ...input('head'), media: null });
    if (!head.ok) throw new Error(head.failure.message);
    const parent = { remoteId: head.remoteId };
    const reply = await publishUntilDone(
      connector,
      input('reply with a file', { replyTo: parent, root: parent, progress: kept() }),
    );
    if (!reply.ok) throw new Error(reply.failure.message);
    expect(env.running.sim.getPost('slack', reply.remoteId)).toMatchObject({
      text: 'reply with a file',
      replyTo: head.remoteId,
    });
    expect(requestsTo('conversations.history')).toHaveLength(0);
    const reads = requestsTo('conversations.replies');
    expect(reads).toHaveLength(1);
    expect(new URLSearchParams(reads[0]?.path.split('?')[1]).get('ts')).toBe(head.remoteId);
  });
});

describe('Slack share not readable in the channel history', () => {
  it('missing_scope: the failure stays transient and names the history scope; the retry only looks again', async () => {
    const noHistory = { ...account, token: 'xoxb-nohistory' };
    const guarded = guardPermissions(connector);
    const progress = kept();
    const args = input('no history scope', { account: noHistory, progress });
    const outcome = await publishUntilDone(guarded, args);
    if (outcome.ok) throw new Error('expected the wait to fail');
    expect(outcome.failure.kind).toBe('transient');
    expect(outcome.failure.outcomeUnknown).toBeUndefined();
    expect(outcome.failure.message).toMatch(/still processing the share of the files/);
    expect(outcome.failure.message).toMatch(/missing_scope.*channels:history or groups:history/);
    expect(requestsTo('conversations.history')).toHaveLength(1);
    // The message exists: the retry keeps the file and the completion time, in a wait of its own.
    expect(progress.saved).toEqual({
      sharedFile: expect.stringMatching(/^F/),
      fileIds: expect.stringMatching(/^F/),
      sharedAt: expect.any(String),
    });
    env.running.sim.processingMs.slack = 0;
    const retried = await publishUntilDone(guarded, args);
    if (!retried.ok) throw new Error(retried.failure.message);
    expect(retried.remoteId).toBe(env.running.sim.postsOf('slack')[0]?.remoteId);
    expect(requestsTo('files.completeUploadExternal')).toHaveLength(1);
  });

  it('a stored grant without the history scope is not asked; a refused read says why', async () => {
    const granted = { ...account, permissions: ['chat:write', 'files:write', 'channels:read'] };
    const outcome = await publishUntilDone(connector, input('grant lacks history', { account: granted }));
    expect(outcome.ok ? null : outcome.failure.message).toMatch(
      /not granted it; the bot token needs channels:history or groups:history/,
    );
    expect(requestsTo('conversations.history')).toHaveLength(0);

    env.running.sim.addFault({
      platform: 'slack',
      kind: 'rate_limited',
      remaining: 1,
      pathIncludes: 'conversations.history',
    });
    const limited = await publishUntilDone(connector, input('history rate limited'));
    expect(limited.ok ? null : limited.failure).toMatchObject({
      kind: 'transient',
      message: expect.stringMatching(/history to find the message failed \(HTTP 429\)/),
    });
  });
});
