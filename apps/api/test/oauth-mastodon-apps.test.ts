import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Express } from 'express';
import { createApi } from '../src/app.js';
import { createLogger } from '../src/logger.js';
import { startTestApi, type TTestApi } from './harness.js';
import { accountIdOf, connectFlow, startConnect } from './oauth-helpers.js';

describe('Mastodon apps after PUBLIC_URL changes', () => {
  let api: TTestApi;
  /** The same deployment (database, Redis) restarted with another PUBLIC_URL. */
  let moved: TTestApi;
  beforeAll(async () => {
    api = await startTestApi({
      sim: true,
      env: { PUBLIC_URL: 'http://old.example', ENCRYPTION_KEY: '11'.repeat(32) },
    });
    const env = { ...api.env, publicUrl: 'https://new.example' };
    const { app } = createApi({
      env,
      db: api.db,
      redis: api.redis,
      queues: api.queues,
      logger: createLogger('silent', 'api-test'),
    });
    moved = { ...api, app: app as Express, env };
  });
  afterAll(() => api.close());

  const registrations = () =>
    (api.sim?.sim.requests ?? []).filter((r) => r.method === 'POST' && r.path === '/mastodon/api/v1/apps')
      .length;

  it('registers a new app for the new redirect URI once, and connects through it; the old app stays usable', async () => {
    const { apiKey } = await api.account('pro');
    const instance = api.sim?.baseUrls.mastodon ?? '';
    const oldStart = await startConnect(api, apiKey, { platform: 'mastodon', instance });
    expect(oldStart.status).toBe(200);
    const oldUrl = new URL(oldStart.body.url);
    expect(oldUrl.searchParams.get('redirect_uri')).toBe('http://old.example/oauth/callback/mastodon');
    const before = registrations();

    const flow = await connectFlow(
      moved,
      apiKey,
      { platform: 'mastodon', instance, redirect_uri: 'https://app.example/done' },
      'nora',
    );
    const started = new URL(flow.started.url);
    expect(started.searchParams.get('redirect_uri')).toBe('https://new.example/oauth/callback/mastodon');
    expect(started.searchParams.get('client_id')).not.toBe(oldUrl.searchParams.get('client_id'));
    accountIdOf(flow);
    expect(registrations() - before).toBe(1);

    // Later connects reuse the new app: no registration per start.
    const again = await startConnect(moved, apiKey, { platform: 'mastodon', instance });
    expect(new URL(again.body.url).searchParams.get('client_id')).toBe(started.searchParams.get('client_id'));
    expect(registrations() - before).toBe(1);

    // A process still running with the old PUBLIC_URL keeps its own app.
    const oldAgain = await startConnect(api, apiKey, { platform: 'mastodon', instance });
    expect(new URL(oldAgain.body.url).searchParams.get('client_id')).toBe(
      oldUrl.searchParams.get('client_id'),
    );
    expect(registrations() - before).toBe(1);
  });
});
