import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startNetworkSim, type TRunningSim } from '@sps/network-sim';
import type { TConnectorAccount, TNetworkConnector, TPublishInput } from '../src/connector.js';
import { createDiscordConnector } from '../src/discord.connector.js';
import { createMediaFetcher } from '../src/media-fetch.js';
import { guardPermissions } from '../src/permissions/permission-guard.js';
import { createSlackConnector } from '../src/slack.connector.js';

// The permission guard every connector runs behind (createConnectors): a stored grant that lacks a
// permission refuses the call before it is sent; a network's own permission refusal is named and rejected.

const account = (over: Partial<TConnectorAccount>): TConnectorAccount => ({
  id: 'acc',
  platform: 'twitter',
  accountName: 'someone',
  externalId: '1',
  instanceUrl: null,
  token: 't',
  ...over,
});

function input(target: TConnectorAccount, extra: Partial<TPublishInput> = {}): TPublishInput {
  return {
    account: target,
    text: 'hello',
    media: null,
    replyTo: null,
    root: null,
    idempotencyKey: 'k',
    ...extra,
  };
}

/** A connector that records its calls and answers what it is told. */
function fake(answer: Awaited<ReturnType<TNetworkConnector['publish']>>) {
  const calls: string[] = [];
  const connector: TNetworkConnector = {
    platform: 'twitter',
    async publish() {
      calls.push('publish');
      return answer;
    },
    async delete() {
      calls.push('delete');
      return answer.ok ? { ok: true } : answer;
    },
  };
  return { calls, guarded: guardPermissions(connector) };
}

describe('permission guard', () => {
  it('refuses before sending what the stored grant lacks, naming it; media needs media.write', async () => {
    const { calls, guarded } = fake({ ok: true, remoteId: '1', url: 'u' });
    const noMedia = account({ permissions: ['tweet.read', 'tweet.write', 'users.read'] });
    expect(await guarded.publish(input(noMedia))).toMatchObject({ ok: true });
    const withImage = await guarded.publish(
      input(noMedia, { media: { images: [{ url: 'https://cdn.example/a.png' }], video: null } }),
    );
    expect(withImage).toEqual({
      ok: false,
      failure: {
        kind: 'rejected',
        message:
          'X needs the media.write permission for this, which the account was not granted: reconnect the X account to grant media.write.',
      },
    });
    expect(calls).toEqual(['publish']);
  });

  it('lets an unknown grant through and turns the network refusal into a named rejection (TikTok 401 is not an expired token)', async () => {
    const { calls, guarded } = fake({
      ok: false,
      failure: {
        kind: 'auth_expired',
        status: 401,
        body: '{"error":{"code":"scope_not_authorized","message":"The user did not authorize the scope required for completing this request."}}',
        message: 'TikTok rejected the token',
      },
    });
    const outcome = await guarded.publish(input(account({ platform: 'tiktok', permissions: null })));
    expect(outcome.ok ? null : outcome.failure).toMatchObject({
      kind: 'rejected',
      status: 401,
      message: expect.stringContaining('video.publish'),
    });
    expect(calls).toEqual(['publish']);
  });

  it('leaves other failures alone (a 401 that is not about scopes stays auth_expired)', async () => {
    const { guarded } = fake({
      ok: false,
      failure: {
        kind: 'auth_expired',
        status: 401,
        body: '{"error":{"code":"access_token_invalid"}}',
        message: 'x',
      },
    });
    const outcome = await guarded.publish(input(account({ platform: 'tiktok' })));
    expect(outcome.ok ? null : outcome.failure.kind).toBe('auth_expired');
  });
});

describe('permission refusals of the bot networks (simulated)', () => {
  let running: TRunningSim;
  let discord: TNetworkConnector;
  let slack: TNetworkConnector;
  beforeAll(async () => {
    running = await startNetworkSim();
    const options = { timeoutMs: 5000, fetchMedia: createMediaFetcher({ allowPrivate: true }) };
    discord = guardPermissions(createDiscordConnector({ ...options, baseUrl: running.baseUrls.discord }));
    slack = guardPermissions(createSlackConnector({ ...options, baseUrl: running.baseUrls.slack }));
  });
  afterAll(() => running.close());

  it('Discord 50013 Missing Permissions: rejected, naming the channel permissions the bot needs', async () => {
    const outcome = await discord.publish(
      input(account({ platform: 'discord', externalId: 'nosend-1100000000000000042', token: 'dc-bot' })),
    );
    expect(outcome.ok ? null : outcome.failure).toMatchObject({
      kind: 'rejected',
      status: 403,
      message: expect.stringMatching(/SEND_MESSAGES.*give the bot/),
    });
    expect(running.sim.postsOf('discord')).toHaveLength(0);
  });

  it('Slack missing_scope on the read-back: the read cannot tell, naming the history scope', async () => {
    const target = account({ platform: 'slack', externalId: 'C0SIM', token: 'xoxb-nohistory' });
    const found = await slack.findPublished?.({
      account: target,
      text: 'hello',
      replyTo: null,
      root: null,
      mediaCount: 0,
      idempotencyKey: 'k',
      since: new Date(Date.now() - 60_000),
      until: new Date(),
    });
    expect(found).toMatchObject({ kind: 'cannot_tell', reason: expect.stringContaining('channels:history') });
  });
});

describe('permission guard: metrics reads', () => {
  const refs = [{ remoteId: '1', publishedAt: new Date() }];
  function reader(answer: Awaited<ReturnType<NonNullable<TNetworkConnector['readMetrics']>>>) {
    const calls: string[] = [];
    const connector: TNetworkConnector = {
      platform: 'threads',
      async publish() {
        return { ok: true, remoteId: '1', url: 'u' };
      },
      metricsBatchSize: 1,
      async readMetrics() {
        calls.push('read');
        return answer;
      },
    };
    return { calls, guarded: guardPermissions(connector) };
  }

  it("checks the 'metrics' row before the read: a grant without threads_manage_insights is refused unsent", async () => {
    const { calls, guarded } = reader({ ok: true, results: new Map() });
    expect(guarded.metricsBatchSize).toBe(1);
    const lacking = account({
      platform: 'threads',
      permissions: ['threads_basic', 'threads_content_publish'],
    });
    const refused = await guarded.readMetrics?.(lacking, refs);
    expect(refused).toMatchObject({ ok: false, failure: { kind: 'rejected' } });
    expect(refused && !refused.ok ? refused.failure.message : '').toMatch(
      /threads_manage_insights permission for reading the post's figures.*reconnect the Threads account to grant threads_manage_insights/,
    );
    expect(calls).toEqual([]);
    const granted = account({
      platform: 'threads',
      permissions: ['threads_basic', 'threads_manage_insights'],
    });
    expect(await guarded.readMetrics?.(granted, refs)).toMatchObject({ ok: true });
    expect(calls).toEqual(['read']);
  });

  it("names the network's own refusal when the grant is unknown (code 10), rejected", async () => {
    const { calls, guarded } = reader({
      ok: false,
      failure: {
        kind: 'rejected',
        status: 403,
        message: 'refused',
        body: '{"error":{"message":"Application does not have permission for this action","code":10}}',
      },
    });
    const unknown = account({ platform: 'threads', permissions: null });
    const out = await guarded.readMetrics?.(unknown, refs);
    expect(calls).toEqual(['read']);
    expect(out && !out.ok ? out.failure : null).toMatchObject({
      kind: 'rejected',
      status: 403,
      message: expect.stringContaining('threads_manage_insights'),
    });
  });
});
