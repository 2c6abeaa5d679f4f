import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';
import { accountIdOf, connectFlow, consent, simTokens, startConnect } from './oauth-helpers.js';
import { createB, settleB, simPosts, uniqueMarker } from './pipeline-helpers.js';

describe('Connecting X through OAuth 2.0 with PKCE (simulated X authorization server)', () => {
  let api: TTestApi;
  let key: string;

  beforeAll(async () => {
    api = await startTestApi({ publisher: true });
    ({ apiKey: key } = await api.account('pro'));
  });
  afterAll(() => api.close());

  it('answers the URL of the authorization page with state and PKCE S256, then connects through the callback', async () => {
    const flow = await connectFlow(api, key, {
      platform: 'twitter',
      redirect_uri: 'https://app.example/done?x=1',
    });
    const url = new URL(flow.started.url);
    expect(`${url.origin}${url.pathname}`).toBe(`${api.sim?.url}/twitter/i/oauth2/authorize`);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('state')).toBe(flow.started.state);
    expect(url.searchParams.get('scope')).toBe(
      'tweet.read tweet.write users.read media.write offline.access',
    );
    expect(url.searchParams.get('redirect_uri')).toBe(`${api.env.publicUrl}/oauth/callback/twitter`);
    expect(Date.parse(flow.started.expires_at)).toBeGreaterThan(Date.now());

    const id = accountIdOf(flow);
    const location = new URL(flow.callback.headers.location ?? '');
    expect(location.origin + location.pathname).toBe('https://app.example/done');
    expect(location.searchParams.get('x')).toBe('1');

    const list = await request(api.app).get('/v1/accounts').set(bearer(key));
    const account = (list.body.accounts as Record<string, unknown>[]).find((a) => a.id === id);
    expect(account).toMatchObject({
      platform: 'twitter',
      account_name: 'alice',
      is_active: true,
      needs_reauth: false,
    });
    const expires = Date.parse(String(account?.token_expires_at));
    // X access tokens live two hours.
    expect(expires - Date.now()).toBeGreaterThan(7000_000);
    expect(expires - Date.now()).toBeLessThanOrEqual(7200_000);

    // The account publishes with the token it was given.
    const marker = uniqueMarker('oauth-x');
    const post = await createB(api, key, { content: `connected ${marker}`, platforms: ['twitter'] });
    await request(api.app).post(`/v1/posts/${post.id}/publish`).set(bearer(key)).expect(200);
    expect((await settleB(api, key, post.id)).status).toBe('published');
    const [tweet] = simPosts(api, 'twitter', marker);
    expect(tweet).toBeDefined();
    const sent = api.sim?.sim.requests.filter((r) => r.path === '/twitter/2/tweets').at(-1);
    const tokens = await simTokens(api, 'twitter');
    expect(tokens.find((t) => `Bearer ${t.value}` === sent?.headers.authorization)?.user).toBe('alice');
  });

  it('reconnecting the same X user revives the same account id and keeps its history', async () => {
    const first = accountIdOf(
      await connectFlow(api, key, { platform: 'twitter', redirect_uri: 'https://app.example/cb' }, 'bob'),
    );
    await request(api.app).delete(`/v1/accounts/${first}`).set(bearer(key)).expect(204);
    let list = await request(api.app).get('/v1/accounts').set(bearer(key));
    expect(
      (list.body.accounts as { id: string; is_active: boolean }[]).find((a) => a.id === first)?.is_active,
    ).toBe(false);
    const again = accountIdOf(
      await connectFlow(api, key, { platform: 'twitter', redirect_uri: 'https://app.example/cb' }, 'bob'),
    );
    expect(again).toBe(first);
    list = await request(api.app).get('/v1/accounts').set(bearer(key));
    const bobs = (list.body.accounts as { account_name: string; is_active: boolean }[]).filter(
      (a) => a.account_name === 'bob',
    );
    expect(bobs).toHaveLength(1);
    expect(bobs[0]?.is_active).toBe(true);
  });

  it('refuses a replayed state, a made-up state and a state of another network', async () => {
    const flow = await connectFlow(
      api,
      key,
      { platform: 'twitter', redirect_uri: 'https://app.example/cb' },
      'carol',
    );
    accountIdOf(flow);
    const replay = await request(api.app).get(`${flow.callbackUrl.pathname}${flow.callbackUrl.search}`);
    expect(replay.status).toBe(400);
    expect(replay.headers.location).toBeUndefined();
    expect(replay.text).toContain('already used');

    const madeUp = await request(api.app).get('/oauth/callback/twitter?state=forged&code=x');
    expect(madeUp.status).toBe(400);

    // A live twitter state presented at the linkedin callback finds nothing (and is not used up by it).
    const started = (await startConnect(api, key, { platform: 'twitter' })).body as {
      url: string;
      state: string;
    };
    const wrong = await request(api.app).get(
      `/oauth/callback/linkedin?state=${encodeURIComponent(started.state)}&code=x`,
    );
    expect(wrong.status).toBe(400);
    const back = await consent(started.url, 'carol');
    const ok = await request(api.app).get(`${back.pathname}${back.search}`);
    // No redirect_uri: a small HTML page says what was connected.
    expect(ok.status).toBe(200);
    expect(ok.text).toContain('Connected carol on twitter');
  });

  it('sends the refusal on the network page back as error=access_denied, connecting nothing', async () => {
    const before = (await request(api.app).get('/v1/accounts').set(bearer(key))).body.accounts.length;
    const flow = await connectFlow(
      api,
      key,
      { platform: 'twitter', redirect_uri: 'https://app.example/cb' },
      'dave',
      'deny',
    );
    expect(flow.callback.status).toBe(302);
    const location = new URL(flow.callback.headers.location ?? '');
    expect(location.searchParams.get('error')).toBe('access_denied');
    expect(location.searchParams.get('account_id')).toBeNull();
    expect((await request(api.app).get('/v1/accounts').set(bearer(key))).body.accounts.length).toBe(before);
  });

  it('a code can be exchanged once: the simulated X refuses its reuse and PKCE without the verifier', async () => {
    const started = (await startConnect(api, key, { platform: 'twitter' })).body as { url: string };
    const back = await consent(started.url, 'erin');
    const code = back.searchParams.get('code') ?? '';
    const basic = `Basic ${Buffer.from('sps-sim-client:sps-sim-secret').toString('base64')}`;
    const exchange = (extra: Record<string, string>) =>
      fetch(`${api.sim?.url}/twitter/2/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          redirect_uri: `${api.env.publicUrl}/oauth/callback/twitter`,
          ...extra,
        }).toString(),
      });
    const noVerifier = await exchange({ code_verifier: 'not-the-verifier-not-the-verifier-000000000' });
    expect(noVerifier.status).toBe(400);
    expect(await noVerifier.json()).toEqual({
      error: 'invalid_request',
      error_description: 'Value passed for the token was invalid.',
    });
    // The code was spent by that attempt: the API's own exchange is refused and reported.
    const res = await request(api.app).get(`${back.pathname}${back.search}`);
    expect(res.status).toBe(400);
    expect(res.text).toContain('Connecting twitter failed');
  });

  it('answers 4xx naming the missing variables when a network has no OAuth app configured', async () => {
    const bare = await startTestApi({});
    try {
      const { apiKey } = await bare.account('pro');
      const res = await request(bare.app)
        .post('/v1/accounts/connect')
        .set(bearer(apiKey))
        .send({ platform: 'tiktok' });
      expect(res.status).toBe(422);
      expect(res.body.error).toContain('OAUTH_TIKTOK_CLIENT_ID');
      expect(res.body.error).toContain('OAUTH_TIKTOK_CLIENT_SECRET');
      expect(res.body.details.missing).toEqual(['OAUTH_TIKTOK_CLIENT_ID', 'OAUTH_TIKTOK_CLIENT_SECRET']);
      const a = await request(bare.app)
        .post('/v1/accounts/connect')
        .set(bearer(apiKey))
        .send({ platform: 'telegram' });
      expect(a.status).toBe(400);
      expect(a.body.details.field).toBe('platform');
      const m = await request(bare.app)
        .post('/v1/accounts/connect')
        .set(bearer(apiKey))
        .send({ platform: 'mastodon' });
      expect(m.status).toBe(400);
      expect(m.body.details.field).toBe('instance');
      const bad = await request(bare.app)
        .post('/v1/accounts/connect')
        .set(bearer(apiKey))
        .send({ platform: 'x' });
      expect(bad.status).toBe(400);
    } finally {
      await bare.close();
    }
  });
});
