import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { startSmtpSink, type TSmtpSink } from '../../webhooks/test/support/smtp-sink.js';
import { bearer, startTestApi, type TTestApi } from './harness.js';
import { simControl } from './oauth-helpers.js';
import { createB, pollUntil, settleB, simPosts, uniqueMarker } from './pipeline-helpers.js';

/**
 * Bluesky accounts keep their session (issue #11): the app password signs in at connect, publishes use
 * the access JWT, an expired one is refreshed under the account's lock, and the app password signs in
 * again only when the refresh JWT has ended. createSession is limited to 30 per 5 minutes per account.
 */
describe('Bluesky sessions through the API and the publisher', () => {
  let api: TTestApi;
  let smtp: TSmtpSink;

  beforeAll(async () => {
    smtp = await startSmtpSink();
    api = await startTestApi({ publisher: true, webhooks: { smtpUrl: smtp.url } });
  });
  // The simulated PDS's clock starts over for each test: session JWTs carry absolute `exp` times.
  beforeEach(async () => {
    await simControl(api, '/__sim/oauth/reset', {});
  });
  afterAll(async () => {
    await api.close();
    await smtp.close();
  });

  /** Sign-ins of one account, by handle (at connect) or by DID (the refresher signs in with the DID). */
  const dids = new Map<string, string>();
  const signIns = (handle: string) =>
    (api.sim?.sim.requests ?? []).filter((r) => {
      const identifier = (r.body as { identifier?: string } | undefined)?.identifier;
      return (
        r.path.endsWith('com.atproto.server.createSession') &&
        (identifier === handle || (identifier !== undefined && identifier === dids.get(handle)))
      );
    }).length;
  const refreshUses = async (handle: string) => {
    const res = await fetch(`${api.sim?.url}/__sim/bluesky/refresh-uses?handle=${handle}`);
    return ((await res.json()) as { uses: number[] }).uses;
  };

  const connect = async (handle: string) => {
    const { apiKey, accountId } = await api.account('pro');
    const res = await request(api.app)
      .post('/v1/accounts')
      .set(bearer(apiKey))
      .send({
        platform: 'bluesky',
        credentials: { identifier: handle, app_password: 'abcd-efgh-ijkl-mnop' },
      });
    expect(res.status).toBe(201);
    dids.set(handle, (res.body as { external_id: string }).external_id);
    return { apiKey, accountId, id: (res.body as { id: string }).id };
  };
  const publish = async (apiKey: string, text: string) => {
    const post = await createB(api, apiKey, { content: text, platforms: ['bluesky'] });
    await request(api.app).post(`/v1/posts/${post.id}/publish`).set(bearer(apiKey)).expect(200);
    return settleB(api, apiKey, post.id, 20_000);
  };
  const accountView = async (apiKey: string, id: string) => {
    const list = await request(api.app).get('/v1/accounts').set(bearer(apiKey));
    return (list.body.accounts as Record<string, unknown>[]).find((a) => a.id === id);
  };

  it('stores the session at connect: token_expires_at is the access JWT exp, and a refresh job is queued', async () => {
    const { apiKey, id } = await connect('shown.bsky.social');
    const view = await accountView(apiKey, id);
    const expires = Date.parse(String(view?.token_expires_at));
    // The simulated PDS issues two-hour access JWTs, as the reference PDS does.
    expect(expires).toBeGreaterThan(Date.now() + 100 * 60_000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 121 * 60_000);
    const jobs = (await api.queues.schedule.getJobs(['delayed', 'waiting'])).filter(
      (j) => j?.name === 'token-refresh' && (j.data as { socialAccountId?: string }).socialAccountId === id,
    );
    expect(jobs).toHaveLength(1);
  });

  it('32 publishes in a row, across a publisher restart, sign in once (at connect) and never meet the createSession limit', async () => {
    const { apiKey } = await connect('many.bsky.social');
    const marker = uniqueMarker('bsky-many');
    for (let batch = 0; batch < 4; batch += 1) {
      if (batch === 2) {
        // Sessions live in PostgreSQL, not in a process: a new publisher does not sign in again.
        await api.stopPublisher();
        await api.startPublisher();
      }
      const done = await Promise.all(
        Array.from({ length: 8 }, (_, i) => publish(apiKey, `post ${batch}-${i} ${marker}`)),
      );
      expect(done.map((p) => p.status)).toEqual(Array(8).fill('published'));
    }
    expect(simPosts(api, 'bluesky', marker)).toHaveLength(32);
    expect(signIns('many.bsky.social')).toBe(1);
  });

  it('an access JWT the PDS calls expired is refreshed once by two concurrent publishes, with no new sign-in', async () => {
    const { apiKey, id } = await connect('pair.bsky.social');
    // The PDS's clock passes the access JWT's two hours; the service still believes it valid.
    await simControl(api, '/__sim/oauth/advance', { seconds: 7201 });
    const marker = uniqueMarker('bsky-pair');
    const [a, b] = await Promise.all([publish(apiKey, `one ${marker}`), publish(apiKey, `two ${marker}`)]);
    expect([a.status, b.status]).toEqual(['published', 'published']);
    expect(simPosts(api, 'bluesky', marker)).toHaveLength(2);
    // One refresh JWT, presented once: the second publisher used what the first stored.
    expect(await refreshUses('pair.bsky.social')).toEqual([1]);
    expect(signIns('pair.bsky.social')).toBe(1);
    expect(await accountView(apiKey, id)).toMatchObject({ is_active: true, needs_reauth: false });
  });

  it('refresh jobs ahead of the access JWT exp keep rotating the session (short lifetimes)', async () => {
    await simControl(api, '/__sim/oauth/lifetimes', { platform: 'bluesky', access_seconds: 4 });
    try {
      const { apiKey } = await connect('kept.bsky.social');
      // Each refresh is due at half the JWT's life (2 s); wait for a few generations.
      const uses = await pollUntil(
        () => refreshUses('kept.bsky.social'),
        (u) => u.length >= 3,
        30_000,
        200,
      );
      expect(uses.length).toBeGreaterThanOrEqual(3);
      // Every refresh JWT was spent exactly once (the lock and the fencing).
      expect(uses.every((n) => n === 1)).toBe(true);
      const marker = uniqueMarker('bsky-kept');
      expect((await publish(apiKey, `still signed in ${marker}`)).status).toBe('published');
      expect(signIns('kept.bsky.social')).toBe(1);
    } finally {
      await simControl(api, '/__sim/oauth/lifetimes', { platform: 'bluesky', access_seconds: 7200 });
    }
  }, 75_000);

  it('an expired refresh JWT falls back to the app password (one more sign-in) and publishes', async () => {
    await simControl(api, '/__sim/oauth/lifetimes', {
      platform: 'bluesky',
      access_seconds: 3600,
      refresh_seconds: 5400,
    });
    try {
      const { apiKey, id } = await connect('lapsed.bsky.social');
      await simControl(api, '/__sim/oauth/advance', { seconds: 6000 });
      const marker = uniqueMarker('bsky-lapsed');
      expect((await publish(apiKey, `back again ${marker}`)).status).toBe('published');
      expect(signIns('lapsed.bsky.social')).toBe(2);
      expect(await accountView(apiKey, id)).toMatchObject({ is_active: true, needs_reauth: false });
    } finally {
      await simControl(api, '/__sim/oauth/lifetimes', {
        platform: 'bluesky',
        access_seconds: 7200,
        refresh_seconds: 7_776_000,
      });
    }
  });

  it('a revoked app password disconnects the account (account.disconnected, one e-mail)', async () => {
    const { apiKey, accountId, id } = await connect('gone.bsky.social');
    await simControl(api, '/__sim/bluesky/revoke-app-password', { identifier: 'gone.bsky.social' });
    await simControl(api, '/__sim/oauth/advance', { seconds: 7201 });
    const marker = uniqueMarker('bsky-gone');
    const done = await publish(apiKey, `refused ${marker}`);
    expect(done.status).toBe('failed');
    expect(JSON.stringify(done.platform_results)).toMatch(/[Rr]econnect/);
    expect(simPosts(api, 'bluesky', marker)).toHaveLength(0);
    expect(await accountView(apiKey, id)).toMatchObject({ is_active: false, needs_reauth: true });
    const events = await api.db.event.findMany({ where: { accountId, type: 'account.disconnected' } });
    expect(events.filter((e) => JSON.stringify(e.data).includes(id))).toHaveLength(1);
    const mails = await pollUntil(
      async () => smtp.messages.filter((m) => m.raw.includes('gone.bsky.social')),
      (m) => m.length >= 1,
      10_000,
    );
    expect(mails).toHaveLength(1);
    expect(signIns('gone.bsky.social')).toBe(2);
  });

  it('an account connected before sessions were kept (the app password as its token) signs in once, then keeps the session', async () => {
    const { apiKey, accountId } = await api.account('pro');
    const id = await api.connect(accountId, 'bluesky', 'legacy.bsky.social', {
      externalId: 'legacy.bsky.social',
    });
    const marker = uniqueMarker('bsky-legacy');
    expect((await publish(apiKey, `first ${marker}`)).status).toBe('published');
    expect((await publish(apiKey, `second ${marker}`)).status).toBe('published');
    expect(signIns('legacy.bsky.social')).toBe(1);
    const view = await accountView(apiKey, id);
    expect(view?.token_expires_at).toEqual(expect.any(String));
  });
});
