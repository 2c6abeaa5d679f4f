import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { TPlatform } from '@sps/core';
import { LINKEDIN_SIM_MEMBER_READ_TOKEN, startNetworkSim, type TRunningSim } from '@sps/network-sim';
import type {
  TConnectorAccount,
  TNetworkConnector,
  TPublishedProbe,
  TPublishInput,
  TRemoteRef,
} from '../src/connector.js';
import { createConnectors } from '../src/connector-registry.js';
import { createBlueskySession } from '../src/oauth/bluesky-session.js';

// Each readable network's `findPublished` against the strict simulator: a post that landed is found with
// the id the publish answered, a post that did not land is absent, a read the network refuses is
// "cannot tell", and a rate-limited read asks to be repeated later (never "absent").

interface TSpec {
  platform: TPlatform;
  account: Omit<TConnectorAccount, 'platform' | 'id'>;
  /** Path fragment of the read endpoint (faults are aimed at it). */
  readPath: string;
  /** Media every post of this network needs (Instagram). */
  media?: TPublishInput['media'];
}

const SPECS: TSpec[] = [
  {
    platform: 'twitter',
    account: { accountName: 'sps_test', externalId: null, instanceUrl: null, token: 'x-token' },
    readPath: '/tweets?',
  },
  {
    platform: 'threads',
    account: { accountName: 'sps_threads', externalId: 'threads-user-1', instanceUrl: null, token: 't' },
    readPath: '/threads?',
  },
  {
    platform: 'instagram',
    account: { accountName: 'sps_ig', externalId: 'ig-1', instanceUrl: null, token: 'ig-token' },
    readPath: '/media?',
    media: { images: [{ url: 'https://media.example/cat.jpg' }], video: null },
  },
  {
    platform: 'facebook',
    account: { accountName: 'Sps Page', externalId: 'page-1', instanceUrl: null, token: 'page-token' },
    readPath: '/published_posts',
  },
  {
    platform: 'linkedin',
    account: {
      accountName: 'Sps Member',
      externalId: 'urn:li:person:abc',
      instanceUrl: null,
      // A token of an app granted r_member_social (see LINKEDIN_SIM_MEMBER_READ_TOKEN).
      token: `token-${LINKEDIN_SIM_MEMBER_READ_TOKEN}`,
    },
    readPath: '/rest/posts?',
  },
  {
    platform: 'slack',
    account: { accountName: 'sps-bot', externalId: 'C123', instanceUrl: null, token: 'xoxb-sim' },
    readPath: 'conversations.history',
  },
  {
    platform: 'discord',
    account: { accountName: 'sps-bot', externalId: 'channel-1', instanceUrl: null, token: 'discord-bot' },
    readPath: '/messages?',
  },
  {
    platform: 'mastodon',
    account: { accountName: 'sps_masto', externalId: null, instanceUrl: null, token: 'masto-token' },
    readPath: '/statuses?',
  },
  {
    platform: 'bluesky',
    account: {
      accountName: 'user.bsky.social',
      externalId: 'user.bsky.social',
      instanceUrl: null,
      token: 'app-pw',
    },
    readPath: 'getRecord',
  },
];

let running: TRunningSim;
let connectors: Partial<Record<TPlatform, TNetworkConnector>>;

beforeAll(async () => {
  running = await startNetworkSim();
  // Bluesky connectors use the stored session (signed in once at connect), never the app password.
  const bluesky = SPECS.find((spec) => spec.platform === 'bluesky');
  const session = await createBlueskySession(
    { serviceUrl: running.baseUrls.bluesky, identifier: 'user.bsky.social', timeoutMs: 2000 },
    'app-pw',
  );
  if (bluesky)
    bluesky.account = { ...bluesky.account, externalId: session.did ?? null, token: session.accessToken };
  connectors = createConnectors({
    baseUrls: running.baseUrls,
    timeoutMs: 2000,
    processingWait: { intervalMs: 10, maxWaitMs: 2000 },
  });
});
afterAll(() => running.close());
beforeEach(() => running.sim.reset());

const unique = (label: string) => `${label} ${Math.random().toString(36).slice(2, 8)}`;

describe.each(SPECS)('$platform read-back', (spec) => {
  const accountOf = (): TConnectorAccount => ({
    ...spec.account,
    id: `acc-${spec.platform}`,
    platform: spec.platform,
  });
  // Bluesky's record key comes from the idempotency key and the post's creation time.
  const postCreatedAt = new Date(Date.now() - 1_000);
  const connector = () => {
    const c = connectors[spec.platform];
    if (!c?.findPublished) throw new Error(`${spec.platform} has no findPublished`);
    return c as TNetworkConnector & Required<Pick<TNetworkConnector, 'findPublished'>>;
  };
  const publish = async (text: string, extra: Partial<TPublishInput> = {}) => {
    const outcome = await connector().publish({
      account: accountOf(),
      text,
      media: spec.media ?? null,
      replyTo: null,
      root: null,
      idempotencyKey: `key-${text}`,
      postCreatedAt,
      ...extra,
    });
    if (!outcome.ok) throw new Error(outcome.failure.message);
    return outcome;
  };
  const probe = (text: string, extra: Partial<TPublishedProbe> = {}): TPublishedProbe => ({
    account: accountOf(),
    text,
    replyTo: null,
    root: null,
    mediaCount: (spec.media?.images.length ?? 0) + (spec.media?.video ? 1 : 0),
    idempotencyKey: `key-${text}`,
    postCreatedAt,
    since: new Date(Date.now() - 5_000),
    until: new Date(),
    ...extra,
  });

  it('finds a post that landed, with the id the publish answered', async () => {
    const text = unique('landed');
    await publish(unique('another post'));
    const sent = await publish(text);
    await publish(unique('a later post'));
    const found = await connector().findPublished(probe(text, { idempotencyKey: `key-${text}` }));
    expect(found).toMatchObject({ kind: 'found', remoteId: sent.remoteId });
    if (found.kind === 'found') expect(found.url).toBe(sent.url);
  });

  it('tells apart posts that differ only by their link, and skips a post recorded for another segment', async () => {
    const words = unique('New article');
    const a = await publish(`${words}: https://blog.example.com/a`);
    expect(await connector().findPublished(probe(`${words}: https://blog.example.com/b`))).toEqual({
      kind: 'absent',
    });
    const same = probe(`${words}: https://blog.example.com/a`);
    expect(await connector().findPublished(same)).toMatchObject({ kind: 'found', remoteId: a.remoteId });
    // Bluesky reads the segment's own record key: no other segment's post can be there.
    if (spec.platform === 'bluesky') return;
    const claimed = async (ids: string[]) => new Set(ids.filter((id) => id === a.remoteId));
    expect(await connector().findPublished({ ...same, claimed })).toEqual({ kind: 'absent' });
  });

  it('answers absent when the post is not there', async () => {
    await publish(unique('something else'));
    expect(await connector().findPublished(probe(unique('never sent')))).toEqual({ kind: 'absent' });
  });

  it('cannot tell when the network refuses the read', async () => {
    running.sim.addFault({
      platform: spec.platform,
      kind: 'rejected',
      remaining: 1,
      pathIncludes: spec.readPath,
    });
    const outcome = await connector().findPublished(probe(unique('refused')));
    expect(outcome).toEqual({ kind: 'cannot_tell', reason: expect.stringContaining('refused') });
  });

  it('asks again later when the read is rate limited', async () => {
    running.sim.addFault({
      platform: spec.platform,
      kind: 'rate_limited',
      retryAfterSeconds: 7,
      remaining: 1,
      pathIncludes: spec.readPath,
    });
    const outcome = await connector().findPublished(probe(unique('limited')));
    expect(outcome).toMatchObject({ kind: 'failed', failure: { kind: 'rate_limited' } });
    if (outcome.kind === 'failed') expect(outcome.failure.retryAfterMs).toBeGreaterThan(4_000);
  });
});

describe('reads a network refuses for good', () => {
  const probe = (account: TConnectorAccount): TPublishedProbe => ({
    account,
    text: 'anything',
    replyTo: null,
    root: null,
    mediaCount: 0,
    idempotencyKey: 'k',
    since: new Date(Date.now() - 5_000),
    until: new Date(),
  });
  const base = { id: 'acc', instanceUrl: null } as const;

  it('LinkedIn without r_member_social: 403 ACCESS_DENIED, so a person checks', async () => {
    const outcome = await connectors.linkedin?.findPublished?.(
      probe({
        ...base,
        platform: 'linkedin',
        accountName: 'm',
        externalId: 'urn:li:person:abc',
        token: 'plain',
      }),
    );
    expect(outcome).toEqual({ kind: 'cannot_tell', reason: expect.stringContaining('ACCESS_DENIED') });
  });

  it('Slack without channels:history: missing_scope, so a person checks', async () => {
    const outcome = await connectors.slack?.findPublished?.(
      probe({ ...base, platform: 'slack', accountName: 'b', externalId: 'C123', token: 'xoxb-nohistory' }),
    );
    expect(outcome).toEqual({ kind: 'cannot_tell', reason: expect.stringContaining('missing_scope') });
  });

  it('Discord without READ_MESSAGE_HISTORY: 50001 Missing Access, so a person checks', async () => {
    const outcome = await connectors.discord?.findPublished?.(
      probe({ ...base, platform: 'discord', accountName: 'b', externalId: 'nohistory-1', token: 'bot' }),
    );
    expect(outcome).toEqual({ kind: 'cannot_tell', reason: expect.stringContaining('Missing Access') });
  });

  it('Mastodon without read:statuses (a connection made before it was asked): 403, so a person checks', async () => {
    const outcome = await connectors.mastodon?.findPublished?.(
      probe({ ...base, platform: 'mastodon', accountName: 'm', externalId: '1', token: 'noread-token' }),
    );
    expect(outcome).toEqual({ kind: 'cannot_tell', reason: expect.stringContaining('read:statuses') });
  });

  it('Telegram and TikTok offer no read-back (see Known gaps)', () => {
    for (const platform of ['telegram', 'tiktok'] as const) {
      expect(connectors[platform]?.findPublished).toBeUndefined();
    }
  });

  it('YouTube reads back comments only: an upload (no parent) is never asked about, so a person checks', async () => {
    const outcome = await connectors.youtube?.findPublished?.(
      probe({ ...base, platform: 'youtube', accountName: 'c', externalId: 'UC1', token: 'yt' }),
    );
    expect(outcome).toEqual({
      kind: 'cannot_tell',
      reason: expect.stringContaining('cannot be asked about an upload'),
    });
  });
});

describe('matching what was sent', () => {
  it('X: a reply is found only under the post it replied to', async () => {
    const x = connectors.twitter;
    if (!x?.findPublished) throw new Error('no X read-back');
    const account: TConnectorAccount = {
      id: 'acc-x',
      platform: 'twitter',
      accountName: 'sps_test',
      externalId: null,
      instanceUrl: null,
      token: 'x-token',
    };
    const base = { account, media: null, root: null, postCreatedAt: new Date() };
    const root = await x.publish({ ...base, text: unique('root'), replyTo: null, idempotencyKey: 'r' });
    if (!root.ok) throw new Error('root failed');
    const text = unique('reply');
    const reply = await x.publish({
      ...base,
      text,
      replyTo: { remoteId: root.remoteId },
      idempotencyKey: 'a',
    });
    if (!reply.ok) throw new Error('reply failed');
    const ask = (replyTo: TRemoteRef | null) =>
      x.findPublished?.({
        account,
        text,
        replyTo,
        root: null,
        mediaCount: 0,
        idempotencyKey: 'a',
        since: new Date(Date.now() - 5_000),
        until: new Date(),
      });
    expect(await ask({ remoteId: root.remoteId })).toMatchObject({ kind: 'found', remoteId: reply.remoteId });
    expect(await ask(null)).toEqual({ kind: 'absent' });
  });
});
