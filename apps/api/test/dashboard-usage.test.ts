import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { hashPassword } from '@sps/core';
import { createOwnerRepository } from '@sps/db';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';

const PASSWORD = 'usage page password';

interface TWindow {
  limit: number;
  used: number;
  remaining: number;
  resets_at: string | null;
}
interface TUsage {
  plan: string;
  rate_limits: {
    enabled: boolean;
    tier: string;
    per_minute: number;
    publishes_per_hour: number;
    keys: { id: string; prefix: string; minute?: TWindow; publish_hour?: TWindow }[];
    dashboard_session: { minute: TWindow; publish_hour: TWindow } | null;
  };
  twitter_allowance: { allowance: number; used: number; remaining: number; resets_at: string };
}

async function signedIn(api: TTestApi, accountId: string) {
  await createOwnerRepository(api.db).setPasswordHash(accountId, await hashPassword(PASSWORD));
  const row = await api.db.account.findUniqueOrThrow({ where: { id: accountId } });
  const agent = request.agent(api.app);
  const res = await agent.post('/dashboard/api/session').send({ email: row.ownerEmail, password: PASSWORD });
  expect(res.status).toBe(200);
  return { agent, csrf: res.body.csrf_token as string };
}

describe('dashboard usage: the API limiter and allowance counters, read without consuming', () => {
  let api: TTestApi;

  beforeAll(async () => {
    // Variant A publishes answer after 50 ms (no publisher runs here): the allowance is taken when they start.
    api = await startTestApi({ env: { PUBLISH_WAIT: '50ms', RATE_LIMIT_B_TIERS: 'starter=7/3' } });
  });
  afterAll(() => api.close());

  it("shows each key's minute and publish-hour windows moving with its requests, and the X allowance", async () => {
    const { accountId, apiKey } = await api.account('starter');
    await api.connect(accountId, 'twitter', 'usage_x');
    const { agent } = await signedIn(api, accountId);
    const keyRow = await api.db.apiKey.findFirstOrThrow({ where: { accountId } });

    const first = (await agent.get('/dashboard/api/usage')).body as TUsage;
    expect(first).toMatchObject({
      plan: 'starter',
      rate_limits: { enabled: true, tier: 'starter', per_minute: 7, publishes_per_hour: 3 },
      twitter_allowance: { allowance: 1000, used: 0, remaining: 1000 },
    });
    const before = first.rate_limits.keys.find((k) => k.id === keyRow.id);
    expect(before?.minute).toEqual({ limit: 7, used: 0, remaining: 7, resets_at: null });
    expect(before?.publish_hour).toEqual({ limit: 3, used: 0, remaining: 3, resets_at: null });
    expect(Date.parse(first.twitter_allowance.resets_at)).toBeGreaterThan(Date.now());

    // Two reads and one publish with the key: the minute window counts 2 (publish counts against the hour).
    await request(api.app).get('/v1/posts').set(bearer(apiKey)).expect(200);
    const post = await request(api.app)
      .post('/v1/posts')
      .set(bearer(apiKey))
      .send({ content: 'usage', platforms: ['twitter'] })
      .expect(201);
    await request(api.app).post(`/v1/posts/${post.body.id}/publish`).set(bearer(apiKey)).expect(200);
    // A Variant A publish to twitter takes one unit of the monthly allowance (Variant B never does).
    await request(api.app)
      .post('/api/posts')
      .set(bearer(apiKey))
      .send({ content: 'usage via A', platforms: ['twitter'], published: true })
      .expect(201);

    const after = (await agent.get('/dashboard/api/usage')).body as TUsage;
    const moved = after.rate_limits.keys.find((k) => k.id === keyRow.id);
    expect(moved?.minute).toMatchObject({ limit: 7, used: 2, remaining: 5 });
    expect(Date.parse(moved?.minute?.resets_at ?? '')).toBeGreaterThan(Date.now());
    expect(moved?.publish_hour).toMatchObject({ limit: 3, used: 1, remaining: 2 });
    expect(after.twitter_allowance).toMatchObject({ used: 1, remaining: 999 });

    // Reading the page consumed nothing.
    const again = (await agent.get('/dashboard/api/usage')).body as TUsage;
    expect(again.rate_limits.keys.find((k) => k.id === keyRow.id)?.minute?.used).toBe(2);
  });

  it("counts the dashboard's own requests against its session, not against the keys", async () => {
    const { accountId } = await api.account('starter');
    const { agent } = await signedIn(api, accountId);
    await agent.get('/dashboard/api/v1/posts').expect(200);
    await agent.get('/dashboard/api/v1/accounts').expect(200);
    const usage = (await agent.get('/dashboard/api/usage')).body as TUsage;
    expect(usage.rate_limits.dashboard_session?.minute).toMatchObject({ used: 2, remaining: 5 });
    expect(usage.rate_limits.keys.every((k) => k.minute?.used === 0)).toBe(true);
  });

  it("lists only the signed-in account's keys, never revoked ones, and needs a session", async () => {
    const mine = await api.account('starter');
    const theirs = await api.account('starter');
    const { agent, csrf } = await signedIn(api, mine.accountId);
    const extra = await agent.post('/dashboard/api/keys').set('x-csrf-token', csrf).expect(201);
    await agent.delete(`/dashboard/api/keys/${extra.body.id}`).set('x-csrf-token', csrf).expect(204);
    const usage = (await agent.get('/dashboard/api/usage')).body as TUsage;
    const ids = usage.rate_limits.keys.map((k) => k.id);
    const theirKeys = await api.db.apiKey.findMany({ where: { accountId: theirs.accountId } });
    expect(ids).toHaveLength(1);
    expect(ids).not.toContain(extra.body.id);
    expect(ids).not.toContain(theirKeys[0]?.id);
    expect((await request(api.app).get('/dashboard/api/usage')).status).toBe(401);
  });
});

describe('dashboard usage with RATE_LIMITS=off', () => {
  let api: TTestApi;
  beforeAll(async () => {
    api = await startTestApi({ env: { RATE_LIMITS: 'off' } });
  });
  afterAll(() => api.close());

  it('says limits are off and still shows the plan and the allowance', async () => {
    const { accountId } = await api.account('free');
    const { agent } = await signedIn(api, accountId);
    const usage = (await agent.get('/dashboard/api/usage')).body as TUsage;
    expect(usage.rate_limits.enabled).toBe(false);
    expect(usage.rate_limits.dashboard_session).toBeNull();
    expect(usage.rate_limits.keys[0]?.minute).toBeUndefined();
    expect(usage.twitter_allowance).toMatchObject({ allowance: 100, used: 0 });
  });
});

describe('dashboard connect options: the connect service tells how each network connects here', () => {
  let api: TTestApi;
  beforeAll(async () => {
    // No OAuth client configured except X's: every other OAuth network names its missing variables.
    api = await startTestApi({
      env: { OAUTH_TWITTER_CLIENT_ID: 'id', OAUTH_TWITTER_CLIENT_SECRET: 'secret' },
    });
  });
  afterAll(() => api.close());

  it('names what the operator has not set, as the connect call refuses it, and the credential fields', async () => {
    const { accountId } = await api.account('pro');
    const { agent, csrf } = await signedIn(api, accountId);
    const res = await agent.get('/dashboard/api/connect-options').expect(200);
    const byPlatform = Object.fromEntries(
      (res.body.networks as { platform: string }[]).map((n) => [n.platform, n]),
    );
    expect(Object.keys(byPlatform)).toHaveLength(12);
    expect(byPlatform['twitter']).toEqual({
      platform: 'twitter',
      method: 'authorization_page',
      needs: null,
      missing: [],
    });
    expect(byPlatform['linkedin']).toMatchObject({
      method: 'authorization_page',
      needs: 'organization',
      missing: ['OAUTH_LINKEDIN_CLIENT_ID', 'OAUTH_LINKEDIN_CLIENT_SECRET'],
    });
    expect(byPlatform['mastodon']).toMatchObject({ needs: 'instance', missing: [] });
    expect(byPlatform['facebook']).toMatchObject({ needs: 'page_id' });
    expect(byPlatform['bluesky']).toEqual({
      platform: 'bluesky',
      method: 'credentials',
      fields: [
        { name: 'identifier', required: true },
        { name: 'app_password', required: true },
        { name: 'service', required: false },
      ],
    });
    expect(byPlatform['telegram']).toMatchObject({
      fields: [
        { name: 'bot_token', required: true },
        { name: 'chat_id', required: true },
      ],
    });
    // The same words as the connect call's refusal.
    const refused = await agent
      .post('/dashboard/api/v1/accounts/connect')
      .set('x-csrf-token', csrf)
      .send({ platform: 'linkedin' });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toBe((byPlatform['linkedin'] as { error: string }).error);
    expect((await request(api.app).get('/dashboard/api/connect-options')).status).toBe(401);
  });
});
