import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TPlatform } from '@sps/core';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';
import { accountIdOf, connectFlow } from './oauth-helpers.js';
import { createB, pollUntil, settleB, uniqueMarker } from './pipeline-helpers.js';

// Issue 25: the scopes of each metrics read are in the permission table. An account connected without the
// one its read needs shows it in `reconnect_to_grant`, and its figures show the error naming it, the read
// never sent (the grant is known) or refused by the simulator as the network does (the grant is unknown);
// either way it is not retried.

const redirect = 'https://app.example/cb';
type TMetricsBody = { platforms: Record<string, Record<string, unknown>> };

describe('metrics reads and the permissions they need', () => {
  let api: TTestApi;

  beforeAll(async () => {
    api = await startTestApi({ publisher: true, networkTimeoutMs: 10_000 });
  });
  afterAll(async () => {
    await api.close();
  });

  const requests = (platform: TPlatform, part: string) =>
    (api.sim?.sim.requests ?? []).filter(
      (r) => r.platform === platform && r.method === 'GET' && r.path.includes(part),
    );
  const metricsOf = async (key: string, id: string) =>
    (await request(api.app).get(`/v1/posts/${id}/metrics`).set(bearer(key))).body as TMetricsBody;
  const accountView = async (key: string, id: string) =>
    (
      (await request(api.app).get('/v1/accounts').set(bearer(key))).body.accounts as Record<string, unknown>[]
    ).find((a) => a.id === id);

  /** Publishes, asks for a refresh, and waits for the network's figures or error. */
  async function refreshed(key: string, platform: TPlatform, body: object) {
    const post = await createB(api, key, { ...body, platforms: [platform] });
    expect((await request(api.app).post(`/v1/posts/${post.id}/publish`).set(bearer(key))).status).toBe(200);
    expect((await settleB(api, key, post.id, 20_000)).status).toBe('published');
    expect(
      (await request(api.app).post(`/v1/posts/${post.id}/metrics/refresh`).set(bearer(key))).status,
    ).toBe(202);
    const shown = await pollUntil(
      () => metricsOf(key, post.id),
      (b) => {
        const shown = b.platforms[platform];
        return typeof shown?.error === 'string' || typeof shown?.collected_at === 'string';
      },
      20_000,
    );
    return shown.platforms[platform] ?? {};
  }

  /** Every metrics job finished without a failed attempt (a missing permission is not retried). */
  async function noRetries() {
    const jobs = await api.queues.metrics.getJobs(['completed', 'failed', 'delayed', 'waiting', 'active']);
    expect(jobs.filter((j) => j.attemptsMade > 1 || j.failedReason)).toEqual([]);
  }

  it('instagram without instagram_business_manage_insights: to grant, the error names it, no read sent', async () => {
    const { apiKey } = await api.account('pro');
    const id = accountIdOf(
      await connectFlow(api, apiKey, { platform: 'instagram', redirect_uri: redirect }, 'insa', 'allow', [
        'instagram_business_manage_insights',
      ]),
    );
    expect((await accountView(apiKey, id))?.reconnect_to_grant).toEqual([
      'instagram_business_manage_insights',
    ]);
    const before = requests('instagram', '/insights').length;
    const shown = await refreshed(apiKey, 'instagram', {
      content: `insights ${uniqueMarker('ig')}`,
      media: { images: [{ url: 'https://cdn.example.com/cat.jpg' }] },
    });
    expect(shown.error).toEqual(expect.stringContaining('instagram_business_manage_insights'));
    expect(shown.error).toMatch(
      /reconnect the Instagram account to grant instagram_business_manage_insights/,
    );
    expect(requests('instagram', '/insights').length).toBe(before);
    await noRetries();
  });

  it('linkedin organization without rw_organization_admin: to grant, the error names it, no read sent', async () => {
    const { apiKey } = await api.account('pro');
    const flow = await connectFlow(
      api,
      apiKey,
      { platform: 'linkedin', redirect_uri: redirect, target: 'organization' },
      'olaf',
      'allow',
      ['rw_organization_admin'],
    );
    const ids = new URL(flow.callback.headers.location ?? '').searchParams.get('account_ids');
    const id = ids ? (ids.split(',')[0] ?? '') : accountIdOf(flow);
    expect((await accountView(apiKey, id))?.reconnect_to_grant).toEqual(['rw_organization_admin']);
    const before = requests('linkedin', 'organizationalEntityShareStatistics').length;
    const shown = await refreshed(apiKey, 'linkedin', { content: `stats ${uniqueMarker('li')}` });
    expect(shown.error).toEqual(expect.stringContaining('rw_organization_admin'));
    expect(shown.error).toMatch(/reconnect the LinkedIn account/);
    expect(requests('linkedin', 'organizationalEntityShareStatistics').length).toBe(before);
    await noRetries();
  });

  it('threads (the grant is not told) without threads_manage_insights: the refusal is named, sent once', async () => {
    const { apiKey } = await api.account('pro');
    const flow = await connectFlow(
      api,
      apiKey,
      { platform: 'threads', redirect_uri: redirect },
      'thor',
      'allow',
      ['threads_manage_insights'],
    );
    accountIdOf(flow);
    const before = requests('threads', '/insights').length;
    const shown = await refreshed(apiKey, 'threads', { content: `insights ${uniqueMarker('th')}` });
    expect(shown.error).toEqual(expect.stringContaining('threads_manage_insights'));
    expect(shown.error).toMatch(/Threads refused the call.*reconnect/);
    // The simulator refused it (scope-guard.sim.ts) once: a missing permission is not retried.
    expect(requests('threads', '/insights').length).toBe(before + 1);
    await noRetries();
  });
});
