// Issue 21: each OAuth network connected through its simulated authorization server with exactly the
// scopes the service asks, then a publish, a read-back and a delete. The same with one permission withheld:
// oauth-permissions-withheld.test.ts and oauth-permissions-later-calls.test.ts.
import { beforeAll, describe, expect, it } from '@jest/globals';
import { requestedScopes, type TPlatform } from '@sps/core';
import type { TTestApi } from './harness.js';
import { accountIdOf, connectFlow, type TConnectBody } from './oauth-helpers.js';
import { permissionsRig, redirect, text, YT } from './oauth-permissions-rig.js';
import { simPosts, uniqueMarker } from './pipeline-helpers.js';

describe('permissions as the networks grant them', () => {
  const rig = permissionsRig();
  const { view, loaded, publish } = rig;
  let api: TTestApi;
  let clipUrl: string;
  beforeAll(() => {
    ({ api, clipUrl } = rig);
  });

  interface TCase {
    platform: TPlatform;
    user: string;
    connect?: Partial<TConnectBody>;
    /** What the account shows as granted (null: the network does not say, Threads). */
    granted: string[] | null;
    body: (marker: string) => object;
    readBack: boolean;
    deletes: boolean;
  }

  const CASES: TCase[] = [
    {
      platform: 'twitter',
      user: 'xena',
      granted: requestedScopes('twitter'),
      body: text,
      readBack: true,
      deletes: true,
    },
    {
      platform: 'youtube',
      user: 'yara',
      granted: [YT('youtube.force-ssl')],
      body: (m) => ({ content: `perm ${m}`, media: { images: [], video: { url: clipUrl } } }),
      readBack: false,
      deletes: true,
    },
    {
      platform: 'linkedin',
      user: 'orla',
      connect: { target: 'organization' },
      granted: [
        'r_organization_admin',
        'w_organization_social',
        'r_organization_social',
        'rw_organization_admin',
      ],
      body: text,
      readBack: true,
      deletes: true,
    },
    {
      platform: 'tiktok',
      user: 'tess',
      granted: ['user.info.basic', 'video.publish', 'video.list'],
      body: (m) => ({ content: `perm ${m}`, media: { images: [], video: { url: clipUrl } } }),
      readBack: false,
      deletes: false,
    },
    { platform: 'threads', user: 'thea', granted: null, body: text, readBack: true, deletes: true },
    {
      platform: 'instagram',
      user: 'iris',
      granted: requestedScopes('instagram'),
      body: (m) => ({
        content: `perm ${m}`,
        media: { images: [{ url: 'https://cdn.example.com/cat.jpg' }] },
      }),
      readBack: true,
      deletes: false,
    },
    {
      platform: 'facebook',
      user: 'faye',
      granted: requestedScopes('facebook'),
      body: text,
      readBack: true,
      deletes: true,
    },
  ];

  for (const c of CASES) {
    it(`${c.platform}: connects with exactly the scopes the service asks, publishes, reads back and deletes`, async () => {
      const { apiKey, accountId } = await api.account('pro');
      const flow = await connectFlow(
        api,
        apiKey,
        { platform: c.platform, redirect_uri: redirect, ...c.connect },
        c.user,
      );
      const asked = new URL(flow.started.url).searchParams.get('scope') ?? '';
      const audience = c.connect?.target === 'organization' ? 'organization' : 'member';
      expect(asked.split(/[ ,]/).sort()).toEqual(requestedScopes(c.platform, audience).sort());
      const ids = new URL(flow.callback.headers.location ?? '').searchParams.get('account_ids');
      const id = ids ? (ids.split(',')[0] ?? '') : accountIdOf(flow);
      const shown = await view(apiKey, id);
      const permissions = (shown?.permissions ?? null) as string[] | null;
      expect(permissions ? [...permissions].sort() : null).toEqual(c.granted ? [...c.granted].sort() : null);
      expect(shown?.reconnect_to_grant).toEqual([]);

      const m = uniqueMarker(`perm-${c.platform}`);
      const done = await publish(apiKey, { ...c.body(m), platforms: [c.platform] });
      expect(done.status).toBe('published');
      const result = done.platform_results?.[c.platform];
      if (!result?.success) throw new Error(`not published: ${JSON.stringify(result)}`);
      expect(simPosts(api, c.platform, m)).toHaveLength(1);

      const account = await loaded(accountId, id, c.platform);
      const connector = api.publisher?.context.connectors[c.platform];
      if (c.readBack) {
        const found = await connector?.findPublished?.({
          account,
          text: `perm ${m}`,
          replyTo: null,
          root: null,
          mediaCount: c.platform === 'instagram' ? 1 : 0,
          idempotencyKey: 'k',
          since: new Date(Date.now() - 60_000),
          until: new Date(Date.now() + 60_000),
        });
        expect(found).toMatchObject({ kind: 'found', remoteId: result.post_id });
      }
      if (c.deletes) {
        expect(await connector?.delete?.(account, { remoteId: result.post_id })).toEqual({ ok: true });
        expect(simPosts(api, c.platform, m)[0]?.deleted).toBe(true);
      }
    });
  }

  it('mastodon: the instance grants the scopes asked; publish, read back and delete', async () => {
    const { apiKey, accountId } = await api.account('pro');
    const instance = api.sim?.baseUrls.mastodon ?? '';
    const id = accountIdOf(
      await connectFlow(api, apiKey, { platform: 'mastodon', instance, redirect_uri: redirect }, 'mona'),
    );
    const granted = ((await view(apiKey, id))?.permissions ?? []) as string[];
    expect([...granted].sort()).toEqual(
      ['read:accounts', 'read:statuses', 'write:media', 'write:statuses'].sort(),
    );
    const m = uniqueMarker('perm-mastodon');
    const done = await publish(apiKey, { content: `perm ${m}`, platforms: ['mastodon'] });
    const result = done.platform_results?.mastodon;
    if (!result?.success) throw new Error('not published');
    const account = await loaded(accountId, id, 'mastodon');
    const connector = api.publisher?.context.connectors.mastodon;
    expect(
      await connector?.findPublished?.({
        account,
        text: `perm ${m}`,
        replyTo: null,
        root: null,
        mediaCount: 0,
        idempotencyKey: 'k',
        since: new Date(Date.now() - 60_000),
        until: new Date(Date.now() + 60_000),
      }),
    ).toMatchObject({ kind: 'found', remoteId: result.post_id });
    expect(await connector?.delete?.(account, { remoteId: result.post_id })).toEqual({ ok: true });
  });
});
