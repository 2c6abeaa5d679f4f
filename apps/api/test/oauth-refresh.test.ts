import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { startSmtpSink, type TSmtpSink } from '../../webhooks/test/support/smtp-sink.js';
import { bearer, startTestApi, type TTestApi } from './harness.js';
import { accountIdOf, connectFlow, simControl, simTokens } from './oauth-helpers.js';
import { createB, pollUntil, settleB, simPosts, uniqueMarker } from './pipeline-helpers.js';

/** Keeping X accounts connected: refreshes ahead of expiry, before a publish, after a 401. */
describe('X token refresh', () => {
  let api: TTestApi;
  let smtp: TSmtpSink;
  let key: string;
  let accountId: string;

  beforeAll(async () => {
    smtp = await startSmtpSink();
    api = await startTestApi({ publisher: true, webhooks: { smtpUrl: smtp.url } });
  });
  afterAll(async () => {
    await api.close();
    await smtp.close();
  });

  /** A tenant of its own per test: a post publishes with the tenant's (first) connected X account. */
  const connectX = async (user: string) => {
    ({ apiKey: key, accountId } = await api.account('pro'));
    return accountIdOf(
      await connectFlow(api, key, { platform: 'twitter', redirect_uri: 'https://app.example/cb' }, user),
    );
  };

  /** Refresh grants the simulated X received for one user's refresh tokens (other tests' chains run on). */
  const refreshGrants = async (user: string) => {
    const mine = new Set(
      (await simTokens(api, 'twitter')).filter((t) => t.user === user).map((t) => t.value),
    );
    return (api.sim?.sim.requests ?? []).filter((r) => {
      const body = r.body as { grant_type?: string; refresh_token?: string };
      return (
        r.path === '/twitter/2/oauth2/token' &&
        body.grant_type === 'refresh_token' &&
        mine.has(body.refresh_token ?? '')
      );
    }).length;
  };

  const publishX = async (text: string) => {
    const post = await createB(api, key, { content: text, platforms: ['twitter'] });
    await request(api.app).post(`/v1/posts/${post.id}/publish`).set(bearer(key)).expect(200);
    return post.id;
  };

  const accountView = async (id: string) => {
    const list = await request(api.app).get('/v1/accounts').set(bearer(key));
    return (list.body.accounts as Record<string, unknown>[]).find((a) => a.id === id);
  };

  /** The service believes the token is expired (as it would a while after the last refresh). */
  const expireInDb = (id: string) =>
    api.db.socialAccount.update({ where: { id }, data: { tokenExpiresAt: new Date(Date.now() - 60_000) } });

  it('with two-second tokens, refresh jobs keep the account publishing after twelve generations (a day of 2-hour tokens)', async () => {
    await simControl(api, '/__sim/oauth/lifetimes', { platform: 'twitter', access_seconds: 2 });
    try {
      const id = await connectX('frank');
      const original = (await simTokens(api, 'twitter')).filter(
        (t) => t.user === 'frank' && t.kind === 'access',
      )[0];
      // Each refresh is due at half the token's life. A day of 2-hour tokens is 12 generations: wait for
      // them all, on tokens scaled down to two seconds.
      await pollUntil(
        () => refreshGrants('frank'),
        (n) => n >= 12,
        50_000,
        100,
      );
      const tokens = (await simTokens(api, 'twitter')).filter((t) => t.user === 'frank');
      // The first token has expired at the network; no family was revoked (no refresh token spent twice).
      expect(tokens.find((t) => t.value === original?.value)?.status).toBe('expired');
      expect(tokens.filter((t) => t.status === 'revoked' && t.kind === 'access')).toHaveLength(0);
      const marker = uniqueMarker('x-day-later');
      const postId = await publishX(`still here ${marker}`);
      expect((await settleB(api, key, postId)).status).toBe('published');
      expect(simPosts(api, 'twitter', marker)).toHaveLength(1);
      expect((await accountView(id))?.is_active).toBe(true);
    } finally {
      await simControl(api, '/__sim/oauth/lifetimes', { platform: 'twitter', access_seconds: 7200 });
    }
  }, 90_000);

  it('two publishes after expiry spend one refresh token between them (the lock), and both publish', async () => {
    const id = await connectX('grace');
    await expireInDb(id);
    // The network's clock too: the stored access token really is expired there.
    await simControl(api, '/__sim/oauth/advance', { seconds: 3 * 3600 });
    const marker = uniqueMarker('x-concurrent');
    const [a, b] = await Promise.all([publishX(`one ${marker}`), publishX(`two ${marker}`)]);
    expect((await settleB(api, key, a)).status).toBe('published');
    expect((await settleB(api, key, b)).status).toBe('published');
    expect(await refreshGrants('grace')).toBe(1);
    const family = (await simTokens(api, 'twitter')).filter((t) => t.user === 'grace');
    expect(family.filter((t) => t.status === 'valid' && t.kind === 'refresh')).toHaveLength(1);
    expect(family.filter((t) => t.status === 'valid' && t.kind === 'access')).toHaveLength(1);
  });

  it('a 401 during a publish gets one refresh and one retry of the call', async () => {
    const id = await connectX('heidi');
    // The service thinks the token is good for two hours; the network's clock says otherwise.
    await simControl(api, '/__sim/oauth/advance', { seconds: 3 * 3600 });
    const marker = uniqueMarker('x-401');
    const postId = await publishX(`after 401 ${marker}`);
    expect((await settleB(api, key, postId)).status).toBe('published');
    expect(await refreshGrants('heidi')).toBe(1);
    const unauthorized = (api.sim?.sim.requests ?? []).filter((r) => r.path === '/twitter/2/tweets');
    expect(unauthorized.length).toBeGreaterThanOrEqual(2);
    expect((await accountView(id))?.is_active).toBe(true);
  });

  it('a transient failure of the token endpoint is retried and disconnects nothing', async () => {
    const id = await connectX('ivan');
    await expireInDb(id);
    api.sim?.sim.addFault({
      platform: 'twitter',
      kind: 'server_error',
      remaining: 2,
      pathIncludes: '/2/oauth2/token',
    });
    const marker = uniqueMarker('x-transient');
    const postId = await publishX(`after an outage ${marker}`);
    expect((await settleB(api, key, postId)).status).toBe('published');
    const view = await accountView(id);
    expect(view).toMatchObject({ is_active: true, needs_reauth: false });
    expect(smtp.messages.filter((m) => m.raw.includes('ivan'))).toHaveLength(0);
  });

  it('a refusal of the refresh token disconnects the account, emits account.disconnected and e-mails the owner once', async () => {
    const id = await connectX('judy');
    // Spend the stored refresh token outside the service: the next use is a replay (X revokes the family).
    const stored = (await simTokens(api, 'twitter')).find((t) => t.user === 'judy' && t.kind === 'refresh');
    const basic = `Basic ${Buffer.from('sps-sim-client:sps-sim-secret').toString('base64')}`;
    const spent = await fetch(`${api.sim?.url}/twitter/2/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: stored?.value ?? '',
      }).toString(),
    });
    expect(spent.status).toBe(200);
    await expireInDb(id);
    const marker = uniqueMarker('x-refused');
    const postId = await publishX(`refused ${marker}`);
    const done = await settleB(api, key, postId);
    expect(done.status).toBe('failed');
    expect(done.platform_results?.twitter).toMatchObject({ success: false });
    expect(JSON.stringify(done.platform_results)).toContain('Reconnect');
    expect(await accountView(id)).toMatchObject({ is_active: false, needs_reauth: true });
    // X revoked the whole family when the spent token came back.
    const family = (await simTokens(api, 'twitter')).filter((t) => t.user === 'judy');
    expect(family.every((t) => t.status !== 'valid')).toBe(true);
    const events = await api.db.event.findMany({ where: { accountId, type: 'account.disconnected' } });
    expect(events.filter((e) => JSON.stringify(e.data).includes(id))).toHaveLength(1);
    const mails = await pollUntil(
      async () => smtp.messages.filter((m) => m.raw.includes('judy')),
      (m) => m.length >= 1,
      10_000,
    );
    expect(mails).toHaveLength(1);
    expect(mails[0]?.raw).toContain('POST /v1/accounts/connect');
    // A second publish attempt does not mail again.
    const again = await publishX(`again ${marker}`).catch(() => null);
    expect(again).toBeNull();
    await new Promise((r) => setTimeout(r, 500));
    expect(smtp.messages.filter((m) => m.raw.includes('judy'))).toHaveLength(1);

    // Reconnecting the same user revives the account.
    expect(
      accountIdOf(
        await connectFlow(api, key, { platform: 'twitter', redirect_uri: 'https://app.example/cb' }, 'judy'),
      ),
    ).toBe(id);
    expect(await accountView(id)).toMatchObject({ is_active: true, needs_reauth: false });
  });

  it('the reconciler rebuilds refresh jobs from PostgreSQL after Redis lost them', async () => {
    const id = await connectX('kate');
    await api.db.socialAccount.update({
      where: { id },
      data: { tokenExpiresAt: new Date(Date.now() + 5 * 60_000) },
    });
    const jobsOf = async () =>
      (await api.queues.schedule.getJobs(['delayed', 'waiting', 'completed', 'failed', 'active'])).filter(
        (j) => j?.name === 'token-refresh' && (j.data as { socialAccountId?: string }).socialAccountId === id,
      );
    for (const job of await jobsOf()) await job.remove();
    expect(await jobsOf()).toHaveLength(0);
    const result = await api.publisher?.reconcileNow();
    expect(result?.refreshes).toBeGreaterThanOrEqual(1);
    const [job] = await jobsOf();
    expect(job?.id).toMatch(new RegExp(`^token-refresh-${id}-\\d+$`));
  });
});
