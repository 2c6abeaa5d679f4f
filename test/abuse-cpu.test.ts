import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PLATFORMS, secretBox, type TPlatform } from '@sps/core';
import { createDb, createSocialAccountRepository, type TDb } from '@sps/db';
import { createTestAccount, createTestDatabase, type TTestDatabase, testPrefix } from '@sps/db/testing';
import { freePort, startNode, type TChild, waitUntil } from './processes.js';

// CPU stall (issue #15): texts that cost twitter-text seconds of blocking CPU, sent to the real API and
// publisher processes. The requests must be answered (refused) at once while /healthz of both processes
// keeps answering. Before the bound, one of these requests blocked the API's event loop for 5-30 s.
//
// The precise proof is packages/core/test/link-weight.test.ts (the parser never sees more than 2,048
// units, nor more than one budget per check); this is the coarse end-to-end check, so its time bounds are
// generous: a loaded machine takes a few hundred milliseconds, the unbounded code took seconds per text.

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
/** The text: 63,206 characters (Variant B's maximum) of "a.a.a.…". */
const HOSTILE = 'a.'.repeat(31603);
/** The most Variant A takes: 5,000 characters per text (CJK domains cost ten times more per character). */
const HOSTILE_A = '日.'.repeat(2500);
/** Generous bounds (see above). */
const ANSWER_WITHIN_MS = 3_000;
const HEALTHZ_WITHIN_MS = 1_500;

interface TTimed {
  status: number;
  body: Record<string, unknown>;
  ms: number;
}

async function timed(url: string, init: RequestInit = {}): Promise<TTimed> {
  const start = performance.now();
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(120_000) });
  const text = await res.text();
  const ms = performance.now() - start;
  let body: Record<string, unknown> = {};
  try {
    body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    body = { raw: text };
  }
  return { status: res.status, body, ms };
}

/** GETs `url` one after another until `done` settles; the slowest answer. */
async function slowestWhile(url: string, done: Promise<unknown>): Promise<{ max: number; count: number }> {
  let finished = false;
  void done.finally(() => {
    finished = true;
  });
  let max = 0;
  let count = 0;
  while (!finished) {
    const start = performance.now();
    const res = await fetch(url, { signal: AbortSignal.timeout(60_000) });
    await res.text();
    expect(res.status).toBe(200);
    max = Math.max(max, performance.now() - start);
    count += 1;
    await new Promise((r) => setTimeout(r, 20));
  }
  return { max, count };
}

describe('CPU stall: hostile texts against the real API and publisher', () => {
  const prefix = testPrefix('abusecpu');
  const children: TChild[] = [];
  let database: TTestDatabase | undefined;
  let db: TDb | undefined;
  let apiUrl = '';
  let publisherHealth = '';
  let key = '';

  const outputs = () => children.map((c) => `---- ${c.name}\n${c.output()}`).join('\n');

  beforeAll(async () => {
    database = await createTestDatabase();
    db = createDb(database.url, { poolMax: 2 });
    const encryptionKey = randomBytes(32).toString('hex');
    const sim = startNode('network-sim', 'apps/network-sim/dist/main.js', { SIM_PORT: '0' });
    children.push(sim);
    const simUrl = (await sim.waitForOutput(/network simulator on (http:\/\/[^\s;]+)/, 60_000))[1]!;
    const common: Record<string, string> = {
      NODE_ENV: 'production',
      DATABASE_URL: database.url,
      REDIS_URL,
      QUEUE_PREFIX: prefix,
      ENCRYPTION_KEY: encryptionKey,
      LOG_LEVEL: 'warn',
      ...Object.fromEntries(PLATFORMS.map((p) => [`NETWORK_${p.toUpperCase()}_BASE_URL`, `${simUrl}/${p}`])),
    };
    const port = await freePort();
    apiUrl = `http://127.0.0.1:${port}`;
    children.push(
      startNode('api', 'apps/api/dist/main.js', {
        ...common,
        PORT: String(port),
        HOST: '127.0.0.1',
        NETWORK_AVAILABILITY: 'twitter=live,threads=live,bluesky=live,linkedin=live,mastodon=live',
      }),
    );
    const metricsPort = await freePort();
    publisherHealth = `http://127.0.0.1:${metricsPort}/healthz`;
    children.push(
      startNode('publisher', 'apps/publisher/dist/main.js', {
        ...common,
        METRICS_PORT: String(metricsPort),
        RECONCILE_EVERY: '1s',
      }),
    );

    const account = await createTestAccount(db, 'pro', 'abuse cpu');
    key = account.apiKey;
    const socials = createSocialAccountRepository(db);
    const platforms: TPlatform[] = ['twitter', 'mastodon', 'bluesky'];
    for (const platform of platforms) {
      await socials.connect({
        accountId: account.accountId,
        platform,
        accountName: `${platform}-abuse`,
        externalId: platform === 'bluesky' ? 'user.bsky.social' : null,
        instanceUrl: platform === 'mastodon' ? `${simUrl}/mastodon` : null,
        credentialsEncrypted: secretBox.seal(
          JSON.stringify({ token: 'token-abuse' }),
          secretBox.parseEncryptionKey(encryptionKey),
        ),
      });
    }
    try {
      await waitUntil('api ready', async () => (await fetch(`${apiUrl}/readyz`)).status === 200, 90_000);
      await waitUntil('publisher up', async () => (await fetch(publisherHealth)).status === 200, 90_000);
    } catch (error) {
      throw new Error(`${(error as Error).message}\n${outputs()}`);
    }
  }, 180_000);

  afterAll(async () => {
    await Promise.allSettled(children.map((c) => c.stop(5_000)));
    await db?.$disconnect().catch(() => undefined);
    await database?.drop().catch(() => undefined);
  }, 60_000);

  const send = (method: string, path: string, body?: unknown) =>
    timed(`${apiUrl}${path}`, {
      method,
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  it('Variant A create/update and Variant B publish refuse at once; /healthz keeps answering', async () => {
    // Warm-up: the first request of a new process pays for JIT and the first database connection.
    expect((await send('GET', '/v1/posts?limit=1')).status).toBe(200);
    const created = await send('POST', '/v1/posts', {
      content: HOSTILE,
      platforms: ['twitter', 'mastodon', 'bluesky'],
      segments: Array.from({ length: 24 }, () => ({ content: HOSTILE.slice(0, 5000) })),
    });
    expect(created.status).toBe(201);
    const draftA = await send('POST', '/api/posts', { content: 'fine', platforms: ['twitter'] });
    expect(draftA.status).toBe(201);
    const idA = (draftA.body.post as { id: string }).id;

    const bodyA = {
      content: HOSTILE_A,
      platforms: ['twitter', 'mastodon', 'bluesky'],
      segments: Array.from({ length: 24 }, () => ({ content: HOSTILE_A })),
    };
    const attack = Promise.all([
      send('POST', `/v1/posts/${created.body.id as string}/publish`),
      send('POST', '/api/posts', bodyA),
      send('PUT', `/api/posts/${idA}`, bodyA),
      send('POST', '/api/posts', { ...bodyA, published: true }),
    ]);
    const [health, answers] = await Promise.all([slowestWhile(`${apiUrl}/healthz`, attack), attack]);
    const [publish, createA, updateA, publishA] = answers;

    const slowest = Math.max(...answers.map((a) => a.ms));
    console.log(
      `CPU stall through HTTP: 4 hostile requests answered in at most ${slowest.toFixed(0)} ms; ` +
        `/healthz answered ${health.count} times meanwhile, slowest ${health.max.toFixed(0)} ms`,
    );
    expect(publish.status).toBe(422);
    expect(publish.body.code).toBe('content_too_long');
    expect(String(publish.body.error)).toContain('more than 280 weighted characters');
    for (const a of [createA, updateA, publishA]) {
      expect(a.status).toBe(400);
      expect(JSON.stringify(a.body)).toContain('more than 280 weighted characters for twitter');
    }
    expect(slowest).toBeLessThan(ANSWER_WITHIN_MS);
    expect(health.max).toBeLessThan(HEALTHZ_WITHIN_MS);
  }, 120_000);

  it('the publisher fails due hostile posts at once and keeps publishing the others', async () => {
    const dueAt = new Date(Date.now() + 4_000).toISOString();
    const hostile = await Promise.all(
      [1, 2, 3].map(() =>
        send('POST', '/v1/posts', {
          content: HOSTILE,
          platforms: ['twitter', 'mastodon'],
          scheduled_for: dueAt,
          segments: Array.from({ length: 24 }, () => ({ content: HOSTILE.slice(0, 5000) })),
        }),
      ),
    );
    const fine = await send('POST', '/v1/posts', {
      content: 'due with the hostile ones',
      platforms: ['twitter', 'bluesky'],
      scheduled_for: dueAt,
    });
    for (const h of [...hostile, fine]) expect(h.status).toBe(201);

    const settled = (async () => {
      await waitUntil(
        'every due post finished',
        async () => {
          const all = await Promise.all([...hostile, fine].map((p) => send('GET', `/v1/posts/${p.body.id}`)));
          return all.every((p) => ['failed', 'published'].includes(String(p.body.status)));
        },
        60_000,
        100,
      );
    })();
    const health = await slowestWhile(publisherHealth, settled);
    await settled;

    console.log(
      `CPU stall in the publisher: 3 hostile due posts and another one; publisher /healthz ` +
        `answered ${health.count} times meanwhile, slowest ${health.max.toFixed(0)} ms`,
    );
    for (const h of hostile) {
      const post = await send('GET', `/v1/posts/${h.body.id}`);
      expect(post.body.status).toBe('failed');
      const results = post.body.platform_results as Record<string, { success: boolean; error: string }>;
      expect(results.twitter?.error).toContain('more than 280 weighted characters');
      expect(results.mastodon?.error).toContain('more than 500 graphemes');
    }
    expect((await send('GET', `/v1/posts/${fine.body.id}`)).body.status).toBe('published');
    expect(health.max).toBeLessThan(HEALTHZ_WITHIN_MS);
  }, 120_000);
});
