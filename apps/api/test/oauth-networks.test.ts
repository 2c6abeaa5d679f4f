import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TPlatform } from '@sps/core';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';
import { accountIdOf, connectFlow, simControl, simTokens } from './oauth-helpers.js';
import { createB, settleB, simPosts, uniqueMarker } from './pipeline-helpers.js';

/** Every OAuth network's connect through its simulated authorization server and the API's callback. */
describe('OAuth connect on each network', () => {
  let api: TTestApi;

  beforeAll(async () => {
    api = await startTestApi({ publisher: true });
  });
  afterAll(() => api.close());

  async function tenant() {
    return (await api.account('pro')).apiKey;
  }

  async function accountOf(key: string, id: string) {
    const list = await request(api.app).get('/v1/accounts').set(bearer(key));
    return (list.body.accounts as Record<string, unknown>[]).find((a) => a.id === id);
  }

  const cases: {
    platform: TPlatform;
    externalId: RegExp;
    name: string;
    /** Roughly how long the stored token lives, in days (null: does not expire). */
    days: number | null;
    publish: boolean;
    authorizePath: string;
  }[] = [
    {
      platform: 'linkedin',
      externalId: /^urn:li:person:[0-9a-f]{10}$/,
      name: 'lin',
      days: 60,
      publish: true,
      authorizePath: '/linkedin/oauth/v2/authorization',
    },
    {
      platform: 'youtube',
      externalId: /^UC[0-9a-f]{22}$/,
      name: '@yuki',
      days: 3599 / 86_400,
      publish: false,
      authorizePath: '/youtube/o/oauth2/v2/auth',
    },
    {
      platform: 'tiktok',
      externalId: /^sim-open-/,
      name: 'tina',
      days: 1,
      publish: false,
      authorizePath: '/tiktok/v2/auth/authorize/',
    },
    {
      platform: 'threads',
      externalId: /^\d{17}$/,
      name: 'theo',
      days: 60,
      publish: true,
      authorizePath: '/threads/oauth/authorize',
    },
    {
      platform: 'instagram',
      externalId: /^\d{17}$/,
      name: 'ines',
      days: 60,
      publish: false,
      authorizePath: '/instagram/oauth/authorize',
    },
  ];

  for (const c of cases) {
    it(`${c.platform}: authorization page, code exchange, the network user, a token the network API accepts`, async () => {
      const key = await tenant();
      const user = c.name.replace('@', '');
      const flow = await connectFlow(
        api,
        key,
        { platform: c.platform, redirect_uri: 'https://app.example/cb' },
        user,
      );
      expect(new URL(flow.started.url).pathname).toBe(c.authorizePath);
      const id = accountIdOf(flow);
      const account = await accountOf(key, id);
      expect(account).toMatchObject({ platform: c.platform, account_name: c.name, is_active: true });
      expect(String(account?.external_id)).toMatch(c.externalId);
      if (c.days === null) expect(account?.token_expires_at).toBeNull();
      else {
        const days = (Date.parse(String(account?.token_expires_at)) - Date.now()) / 86_400_000;
        expect(days).toBeGreaterThan(c.days * 0.9);
        expect(days).toBeLessThanOrEqual(c.days);
      }
      if (c.publish) {
        const marker = uniqueMarker(`oauth-${c.platform}`);
        const post = await createB(api, key, { content: `hello ${marker}`, platforms: [c.platform] });
        await request(api.app).post(`/v1/posts/${post.id}/publish`).set(bearer(key)).expect(200);
        const done = await settleB(api, key, post.id);
        expect(done.status).toBe('published');
        expect(simPosts(api, c.platform, marker)).toHaveLength(1);
      }
    });
  }

  it('tiktok: the authorization URL carries client_key and comma-separated scopes', async () => {
    const key = await tenant();
    const res = await request(api.app)
      .post('/v1/accounts/connect')
      .set(bearer(key))
      .send({ platform: 'tiktok' });
    const url = new URL(res.body.url as string);
    expect(url.searchParams.get('client_key')).toBe('sps-sim-client');
    expect(url.searchParams.get('client_id')).toBeNull();
    expect(url.searchParams.get('scope')).toBe('user.info.basic,video.publish,video.list');
  });

  it('youtube: offline access with consent, so a refresh token comes on every connect', async () => {
    const key = await tenant();
    const res = await request(api.app)
      .post('/v1/accounts/connect')
      .set(bearer(key))
      .send({ platform: 'youtube' });
    const url = new URL(res.body.url as string);
    expect(url.searchParams.get('access_type')).toBe('offline');
    expect(url.searchParams.get('prompt')).toBe('consent');
  });

  it('facebook: one account per granted Page, or the Page chosen at connect', async () => {
    const key = await tenant();
    const all = await connectFlow(
      api,
      key,
      { platform: 'facebook', redirect_uri: 'https://app.example/cb' },
      'fiona',
    );
    const location = new URL(all.callback.headers.location ?? '');
    const ids = (location.searchParams.get('account_ids') ?? '').split(',');
    expect(ids).toHaveLength(2);
    const pages = await Promise.all(ids.map((id) => accountOf(key, id)));
    expect(pages.map((p) => p?.account_name).sort()).toEqual(['fiona page 1', 'fiona page 2']);
    // Page tokens from a long-lived user token do not expire.
    expect(pages.every((p) => p?.token_expires_at === null)).toBe(true);

    const pageId = String(pages.find((p) => p?.account_name === 'fiona page 2')?.external_id);
    const key2 = await tenant();
    const one = await connectFlow(
      api,
      key2,
      { platform: 'facebook', redirect_uri: 'https://app.example/cb', page_id: pageId },
      'fiona',
    );
    const onlyId = accountIdOf(one);
    expect(new URL(one.callback.headers.location ?? '').searchParams.get('account_ids')).toBeNull();
    expect((await accountOf(key2, onlyId))?.external_id).toBe(pageId);
    const marker = uniqueMarker('oauth-facebook');
    const post = await createB(api, key2, { content: `page post ${marker}`, platforms: ['facebook'] });
    await request(api.app).post(`/v1/posts/${post.id}/publish`).set(bearer(key2)).expect(200);
    expect((await settleB(api, key2, post.id)).status).toBe('published');

    const missing = await connectFlow(
      api,
      key2,
      { platform: 'facebook', redirect_uri: 'https://app.example/cb', page_id: '999' },
      'fiona',
    );
    expect(new URL(missing.callback.headers.location ?? '').searchParams.get('error')).toBe('no_page');
  });

  it('mastodon: registers the app on the instance once, then connects through it', async () => {
    const key = await tenant();
    const instance = api.sim?.baseUrls.mastodon ?? '';
    const apps = () => (api.sim?.sim.requests ?? []).filter((r) => r.path === '/mastodon/api/v1/apps').length;
    const before = apps();
    const first = await connectFlow(
      api,
      key,
      { platform: 'mastodon', instance, redirect_uri: 'https://app.example/cb' },
      'max',
    );
    const id = accountIdOf(first);
    expect(new URL(first.started.url).pathname).toBe('/mastodon/oauth/authorize');
    expect(await accountOf(key, id)).toMatchObject({
      platform: 'mastodon',
      account_name: 'max',
      instance_url: instance,
      token_expires_at: null,
    });
    await connectFlow(
      api,
      key,
      { platform: 'mastodon', instance, redirect_uri: 'https://app.example/cb' },
      'mia',
    );
    expect(apps() - before).toBe(1);
    const marker = uniqueMarker('oauth-mastodon');
    const post = await createB(api, key, { content: `toot ${marker}`, platforms: ['mastodon'] });
    await request(api.app).post(`/v1/posts/${post.id}/publish`).set(bearer(key)).expect(200);
    expect((await settleB(api, key, post.id)).status).toBe('published');
  });

  it('mastodon: an app registered before read:statuses was asked is registered again with it', async () => {
    const key = await tenant();
    const instance = api.sim?.baseUrls.mastodon ?? '';
    const apps = () => (api.sim?.sim.requests ?? []).filter((r) => r.path === '/mastodon/api/v1/apps');
    await connectFlow(
      api,
      key,
      { platform: 'mastodon', instance, redirect_uri: 'https://app.example/cb' },
      'old',
    );
    // As the app stood before the read-back needed to list statuses.
    await api.db.mastodonApp.updateMany({
      where: { instanceUrl: instance },
      data: { scopes: 'read:accounts write:statuses write:media', clientId: 'old-client' },
    });
    const before = apps().length;
    const again = await connectFlow(
      api,
      key,
      { platform: 'mastodon', instance, redirect_uri: 'https://app.example/cb' },
      'newer',
    );
    expect(apps().length - before).toBe(1);
    expect(apps().at(-1)?.body).toMatchObject({
      scopes: 'read:accounts read:statuses write:statuses write:media',
    });
    expect(new URL(again.started.url).searchParams.get('scope')).toContain('read:statuses');
    expect(new URL(again.started.url).searchParams.get('client_id')).not.toBe('old-client');
    // Replaced in place: one app for this instance and redirect URI.
    expect(await api.db.mastodonApp.findMany({ where: { instanceUrl: instance } })).toEqual([
      expect.objectContaining({ scopes: 'read:accounts read:statuses write:statuses write:media' }),
    ]);
  });

  it('mastodon: an instance elsewhere must be a public HTTPS server (no request to a private address)', async () => {
    const key = await tenant();
    const res = await request(api.app)
      .post('/v1/accounts/connect')
      .set(bearer(key))
      .send({ platform: 'mastodon', instance: 'http://10.0.0.1' });
    expect(res.status).toBe(400);
    expect(res.body.details.field).toBe('instance');
  });

  it('threads: the long-lived token is refreshed with th_refresh_token once a day old, not before', async () => {
    const key = await tenant();
    const id = accountIdOf(
      await connectFlow(api, key, { platform: 'threads', redirect_uri: 'https://app.example/cb' }, 'tara'),
    );
    const [token] = (await simTokens(api, 'threads')).filter(
      (t) => t.user === 'tara' && t.status === 'valid',
    );
    // The simulated Threads refuses a token younger than 24 hours, as Threads does.
    const young = await fetch(
      `${api.sim?.url}/threads/refresh_access_token?grant_type=th_refresh_token&access_token=${token?.value}`,
    );
    expect(young.status).toBe(400);
    expect(((await young.json()) as { error: { code: number } }).error.code).toBe(10);
    // Fifty-five days later (both clocks): the refresh job is due and refreshes.
    await simControl(api, '/__sim/oauth/advance', { seconds: 55 * 86_400 });
    await api.db.socialAccount.update({
      where: { id },
      data: {
        tokenIssuedAt: new Date(Date.now() - 55 * 86_400_000),
        tokenExpiresAt: new Date(Date.now() + 5 * 86_400_000),
      },
    });
    const outcome = await api.publisher?.context.tokens.refreshJob(id);
    expect(outcome).toEqual({ ok: true, token: expect.stringMatching(/^sim-threads-at-/) });
    const account = await accountOf(key, id);
    expect(Date.parse(String(account?.token_expires_at)) - Date.now()).toBeGreaterThan(59 * 86_400_000);
    const grants = (api.sim?.sim.requests ?? []).filter((r) =>
      r.path.startsWith('/threads/refresh_access_token'),
    );
    expect(grants.length).toBeGreaterThanOrEqual(2);
  });

  it('tiktok: a due token is refreshed with client_key and the rotated refresh token is kept', async () => {
    const key = await tenant();
    const id = accountIdOf(
      await connectFlow(api, key, { platform: 'tiktok', redirect_uri: 'https://app.example/cb' }, 'toby'),
    );
    await api.db.socialAccount.update({
      where: { id },
      data: { tokenExpiresAt: new Date(Date.now() - 1000) },
    });
    expect(await api.publisher?.context.tokens.refreshJob(id)).toEqual({
      ok: true,
      token: expect.any(String),
    });
    await api.db.socialAccount.update({
      where: { id },
      data: { tokenExpiresAt: new Date(Date.now() - 1000) },
    });
    expect(await api.publisher?.context.tokens.refreshJob(id)).toEqual({
      ok: true,
      token: expect.any(String),
    });
    const refreshes = (api.sim?.sim.requests ?? []).filter(
      (r) =>
        r.path === '/tiktok/v2/oauth/token/' &&
        (r.body as { grant_type?: string }).grant_type === 'refresh_token',
    );
    expect(refreshes.length).toBeGreaterThanOrEqual(2);
    expect((refreshes.at(-1)?.body as { client_key?: string } | undefined)?.client_key).toBe(
      'sps-sim-client',
    );
    const family = (await simTokens(api, 'tiktok')).filter((t) => t.user === 'toby' && t.kind === 'refresh');
    expect(family.filter((t) => t.status === 'valid')).toHaveLength(1);
    expect((await accountOf(key, id))?.is_active).toBe(true);
  });
});
