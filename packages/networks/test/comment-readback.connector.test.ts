import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { TPlatform } from '@sps/core';
import { oauthStoreOf, startNetworkSim, type TRunningSim } from '@sps/network-sim';
import type {
  TConnectorAccount,
  TNetworkConnector,
  TPublishedProbe,
  TPublishInput,
} from '../src/connector.js';
import { createFacebookConnector } from '../src/facebook.connector.js';
import { createLinkedInConnector } from '../src/linkedin.connector.js';
import { guardPermissions } from '../src/permissions/permission-guard.js';
import { createYoutubeConnector } from '../src/youtube.connector.js';

// A comment under a post (LinkedIn and Facebook thread segments and first comments, YouTube first comments)
// read back after a lost answer, against the simulator's comment lists and its scope guard.

let running: TRunningSim;
beforeAll(async () => {
  running = await startNetworkSim();
});
afterAll(() => running.close());
beforeEach(() => running.sim.reset());

interface TCase {
  platform: TPlatform;
  account: TConnectorAccount;
  connector: () => TNetworkConnector;
  /** Makes the post commented on; returns its remote id. */
  post: () => Promise<string>;
  /** Scopes of a simulator-issued token that lacks the read, and the permission named for it. */
  without: { scopes: string; named: string };
  url: (parent: string, remoteId: string) => string;
}

const acc = (platform: TPlatform, externalId: string): TConnectorAccount => ({
  id: `acc-${platform}`,
  platform,
  accountName: `${platform} account`,
  externalId,
  instanceUrl: null,
  token: `${platform}-token`,
});

const publishOn = async (connector: TNetworkConnector, account: TConnectorAccount, text: string) => {
  const made = await connector.publish(input(account, text, null));
  if (!made.ok) throw new Error(made.failure.message);
  return made.remoteId;
};

function input(account: TConnectorAccount, text: string, parent: string | null): TPublishInput {
  const ref = parent ? { remoteId: parent } : null;
  return { account, text, media: null, replyTo: ref, root: ref, idempotencyKey: `k-${text}` };
}

const linkedin = acc('linkedin', 'urn:li:person:abc123');
const facebook = acc('facebook', '1122334455');
const youtube = acc('youtube', 'UCsim');
const linkedinConnector = () =>
  createLinkedInConnector({ baseUrl: running.baseUrls.linkedin, timeoutMs: 2000 });
const facebookConnector = () =>
  createFacebookConnector({ baseUrl: running.baseUrls.facebook, timeoutMs: 2000 });

const CASES: TCase[] = [
  {
    platform: 'linkedin',
    account: linkedin,
    connector: linkedinConnector,
    post: () => publishOn(linkedinConnector(), linkedin, 'a LinkedIn post'),
    without: { scopes: 'openid profile w_member_social', named: 'r_member_social' },
    url: (parent, id) =>
      `https://www.linkedin.com/feed/update/${parent}?commentUrn=${encodeURIComponent(id)}`,
  },
  {
    platform: 'facebook',
    account: facebook,
    connector: facebookConnector,
    post: () => publishOn(facebookConnector(), facebook, 'a Facebook post'),
    without: { scopes: 'pages_show_list,pages_manage_posts', named: 'pages_read_engagement' },
    url: (parent, id) => `https://www.facebook.com/${parent}?comment_id=${id.split('_').pop()}`,
  },
  {
    platform: 'youtube',
    account: youtube,
    connector: () => createYoutubeConnector({ baseUrl: running.baseUrls.youtube, timeoutMs: 2000 }),
    post: async () => {
      running.sim.addPost({
        platform: 'youtube',
        remoteId: 'vid-1',
        text: 'a video',
        replyTo: null,
        media: null,
        idempotencyKey: null,
        author: 'UCsim',
      });
      return 'vid-1';
    },
    without: {
      scopes: 'https://www.googleapis.com/auth/youtube.readonly',
      named: 'youtube.force-ssl',
    },
    url: (parent, id) => `https://www.youtube.com/watch?v=${parent}&lc=${id}`,
  },
];

const probeOf = (
  account: TConnectorAccount,
  text: string,
  parent: string,
  claimed: string[] = [],
): TPublishedProbe => ({
  account,
  text,
  replyTo: { remoteId: parent },
  root: { remoteId: parent },
  mediaCount: 0,
  idempotencyKey: 'k',
  postCreatedAt: new Date(Date.now() - 60_000),
  since: new Date(Date.now() - 60_000),
  until: new Date(Date.now() + 1000),
  claimed: async (ids) => new Set(ids.filter((id) => claimed.includes(id))),
});

describe.each(CASES)('$platform comment read-back', (c) => {
  it('finds the comment under the post (the account, the text, not claimed), else absent', async () => {
    const parent = await c.post();
    const made = await c.connector().publish(input(c.account, 'said once', parent));
    if (!made.ok) throw new Error(made.failure.message);
    const again = await c.connector().publish(input(c.account, 'said once', parent));
    if (!again.ok) throw new Error(again.failure.message);
    const find = (text: string, claimed: string[] = []) =>
      c.connector().findPublished?.(probeOf(c.account, text, parent, claimed));

    // Two comments with the same text: either may come first (YouTube lists newest first), the one
    // recorded for another segment is skipped.
    const first = await find('said once');
    const firstId = first?.kind === 'found' ? first.remoteId : '';
    const other = firstId === made.remoteId ? again : made;
    expect([made.remoteId, again.remoteId]).toContain(firstId);
    expect(first).toEqual({
      kind: 'found',
      remoteId: firstId,
      url: c.url(parent, firstId),
      meta: made.meta,
    });
    expect(await find('said once', [firstId])).toMatchObject({ kind: 'found', remoteId: other.remoteId });
    expect(await find('said once', [made.remoteId, again.remoteId])).toEqual({ kind: 'absent' });
    expect(await find('never said')).toEqual({ kind: 'absent' });
  });

  it('a token without the read scope: the network refuses, and the permission is named', async () => {
    const parent = await c.post();
    const issued = oauthStoreOf(running.sim).issue(c.platform, 'u1', 'f1', {
      refresh: false,
      scopes: c.without.scopes,
    });
    const outcome = await guardPermissions(c.connector()).findPublished?.(
      probeOf({ ...c.account, token: issued.accessToken }, 'hello', parent),
    );
    expect(outcome).toMatchObject({ kind: 'cannot_tell', reason: expect.stringContaining(c.without.named) });
    expect(running.sim.requests.filter((r) => r.method === 'GET' && /comment/i.test(r.path))).toHaveLength(1);
  });

  it('a stored grant without the read scope: nothing is sent', async () => {
    const parent = await c.post();
    const before = running.sim.requests.length;
    const outcome = await guardPermissions(c.connector()).findPublished?.(
      probeOf({ ...c.account, permissions: c.without.scopes.split(/[ ,]/) }, 'hello', parent),
    );
    expect(outcome).toMatchObject({ kind: 'cannot_tell', reason: expect.stringContaining(c.without.named) });
    expect(running.sim.requests.length).toBe(before);
  });
});
