import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PLATFORMS, secretBox, type TPlatform, ZRedisClusterNodes } from '@sps/core';
import { createDb, createSocialAccountRepository, type TDb } from '@sps/db';
import { createTestAccount, createTestDatabase, type TTestDatabase, testPrefix } from '@sps/db/testing';
import {
  bullPrefix,
  createQueues,
  createRedisFactory,
  deleteKeysMatching,
  keysMatching,
  type TQueues,
  type TRedis,
} from '@sps/queue';
import { freePort, startNode, type TChild, waitUntil } from './processes.js';

// Scale-out: TWO API processes and TWO publisher processes (the built entry points, as deployed) plus the
// network simulator, against one PostgreSQL database and one Redis key prefix. Posts are created and
// published through both APIs and both variants (immediate, scheduled, threads over several networks);
// every post must end published with every segment on every network exactly once. Variant B rate limits
// must be one counter shared by both APIs, and every queue key must carry the `{prefix}` hash tag.

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
/** `.ci/run` runs this file again on a local Redis Cluster by setting it; every child process gets it too. */
const REDIS_CLUSTER_NODES = process.env.REDIS_CLUSTER_NODES ?? '';
/** Variant B free tier per-minute limit for the shared-counter check (RATE_LIMIT_B_TIERS). */
const FREE_PER_MINUTE = 12;
const POSTS = Number(process.env.SCALE_OUT_POSTS ?? 120);
/** Scheduled posts are due this long after their create request is sent (room for a loaded machine). */
const SCHEDULE_AHEAD_MS = 8_000;

type TKind = 'b-publish' | 'a-now' | 'b-scheduled' | 'a-scheduled' | 'a-publish';
/** 20 slots, repeated: how the posts split between the variants and the ways to publish. */
const KINDS: TKind[] = [
  ...Array<TKind>(9).fill('b-publish'),
  ...Array<TKind>(6).fill('a-now'),
  ...Array<TKind>(2).fill('b-scheduled'),
  'a-scheduled',
  ...Array<TKind>(2).fill('a-publish'),
];
/** Variant B accepts every network; these mix native reply chains and numbered fallbacks. */
const B_PLATFORMS: TPlatform[][] = [
  ['twitter', 'mastodon', 'bluesky'],
  ['twitter'],
  ['mastodon', 'telegram'],
  ['linkedin', 'bluesky'],
  ['telegram', 'linkedin', 'twitter'],
];
/** Variant A's five networks (threads stays pending approval). */
const A_PLATFORMS: TPlatform[][] = [
  ['twitter', 'bluesky'],
  ['mastodon'],
  ['twitter', 'mastodon', 'linkedin'],
  ['bluesky', 'linkedin'],
];
const CONNECTED: TPlatform[] = ['twitter', 'mastodon', 'bluesky', 'linkedin', 'telegram'];
const EXTERNAL_IDS: Partial<Record<TPlatform, string>> = {
  telegram: '-100123',
  linkedin: 'urn:li:person:abc',
  bluesky: 'user.bsky.social',
};

interface TPlanned {
  index: number;
  kind: TKind;
  /** Which API (0 or 1) creates it; the other one publishes it (b-publish, a-publish). */
  api: 0 | 1;
  key: string;
  platforms: TPlatform[];
  /** One unique token per segment (segment 0 is the main text). */
  tokens: string[];
  id?: string;
  scheduledFor?: string;
}

interface TSimPostView {
  platform: TPlatform;
  text: string;
  at: string;
}
interface TSimRequestView {
  platform: TPlatform;
  method: string;
  path: string;
  body: unknown;
}

describe('scale-out: two APIs and two publishers on one Redis and one PostgreSQL', () => {
  const run = randomBytes(3).toString('hex');
  const prefix = testPrefix('scale');
  const encryptionKey = randomBytes(32).toString('hex');
  const children: TChild[] = [];
  let database: TTestDatabase | undefined;
  let db: TDb | undefined;
  let redis: TRedis | undefined;
  let queues: TQueues | undefined;
  let simUrl = '';
  const apiUrls: string[] = [];
  let apis: TChild[] = [];
  let publishers: TChild[] = [];
  const proKeys: string[] = [];
  let freeKey = { key: '', keyId: '' };

  /** Registered at spawn, so afterAll stops it whatever fails later. */
  const track = (child: TChild): TChild => {
    children.push(child);
    return child;
  };
  /** Every child's recent output, for a failure message. */
  const outputs = () =>
    children.map((c) => `---- ${c.name} (${c.running() ? 'running' : 'exited'})\n${c.output()}`).join('\n');

  beforeAll(async () => {
    database = await createTestDatabase();
    db = createDb(database.url, { poolMax: 3 });
    redis = createRedisFactory({
      url: REDIS_URL,
      clusterNodes: ZRedisClusterNodes.parse(REDIS_CLUSTER_NODES),
    }).worker();
    queues = createQueues(redis, prefix);

    const sim = track(startNode('network-sim', 'apps/network-sim/dist/main.js', { SIM_PORT: '0' }));
    simUrl = (await sim.waitForOutput(/network simulator on (http:\/\/[^\s;]+)/, 60_000))[1]!;

    const common: Record<string, string> = {
      NODE_ENV: 'production',
      DATABASE_URL: database.url,
      REDIS_URL,
      REDIS_CLUSTER_NODES,
      QUEUE_PREFIX: prefix,
      ENCRYPTION_KEY: encryptionKey,
      LOG_LEVEL: 'warn',
      // DB_POOL_MAX stays at its default (10): fewer connections than concurrent requests makes Prisma's
      // interactive transactions wait past their 2 s maxWait and answer 500 (P2028).
      ...Object.fromEntries(PLATFORMS.map((p) => [`NETWORK_${p.toUpperCase()}_BASE_URL`, `${simUrl}/${p}`])),
    };
    for (const n of [1, 2]) {
      const port = await freePort();
      apiUrls.push(`http://127.0.0.1:${port}`);
      apis.push(
        track(
          startNode(`api-${n}`, 'apps/api/dist/main.js', {
            ...common,
            PORT: String(port),
            HOST: '127.0.0.1',
            // Every request comes from 127.0.0.1: Variant A's per-IP limits are lifted for the bulk part.
            RATE_LIMIT_A_PER_MINUTE: '1000000',
            RATE_LIMIT_A_PUBLISH_PER_HOUR: '1000000',
            // A small free tier for the shared-counter check; pro (the bulk accounts) keeps its defaults.
            RATE_LIMIT_B_TIERS: `free=${FREE_PER_MINUTE}/5`,
            NETWORK_AVAILABILITY:
              'twitter=live,threads=pending_approval,bluesky=live,linkedin=live,mastodon=live',
            PUBLISH_WAIT: '90s',
          }),
        ),
      );
    }
    for (const n of [1, 2]) {
      publishers.push(
        track(
          startNode(`publisher-${n}`, 'apps/publisher/dist/main.js', {
            ...common,
            // Each worker's health/metrics listener (when it has one) needs a port of its own on this host.
            METRICS_PORT: String(await freePort()),
            PUBLISH_CONCURRENCY: '10',
            NETWORK_TIMEOUT: '20s',
            PUBLISH_BACKOFF_BASE: '500ms',
            // Both processes run the reconciler often: it must never publish what a job is already publishing.
            RECONCILE_EVERY: '1s',
          }),
        ),
      );
    }

    // Accounts, keys and connected networks, written the way `admin social connect` does.
    const socials = createSocialAccountRepository(db);
    const key = secretBox.parseEncryptionKey(encryptionKey);
    for (let a = 0; a < 3; a += 1) {
      const account = await createTestAccount(db, 'pro', `scale-out ${a}`);
      proKeys.push(account.apiKey);
      for (const platform of CONNECTED) {
        await socials.connect({
          accountId: account.accountId,
          platform,
          accountName: `${platform}-scale-${a}`,
          externalId: EXTERNAL_IDS[platform] ?? null,
          instanceUrl: platform === 'mastodon' ? `${simUrl}/mastodon` : null,
          credentialsEncrypted: secretBox.sealV1(
            JSON.stringify({ token: platform === 'telegram' ? `123456:token-${a}` : `token-${a}` }),
            key,
          ),
        });
      }
    }
    const free = await createTestAccount(db, 'free', 'scale-out free');
    freeKey = { key: free.apiKey, keyId: free.keyId };

    try {
      for (const url of apiUrls) {
        await waitUntil(`${url}/readyz`, async () => (await fetch(`${url}/readyz`)).status === 200, 90_000);
      }
      // Both publishers consume every queue before any post is created.
      await waitUntil(
        'two workers on the publish and schedule queues',
        async () =>
          (await queues!.publish.getWorkersCount()) >= 2 && (await queues!.schedule.getWorkersCount()) >= 2,
        90_000,
        250,
      );
    } catch (error) {
      throw new Error(`${(error as Error).message}\n${outputs()}`);
    }
  }, 240_000);

  afterAll(async () => {
    await Promise.allSettled(children.map((c) => c.stop(5_000)));
    await queues?.close().catch(() => undefined);
    if (redis) {
      // Leave nothing of this run's prefix behind.
      await deleteKeysMatching(redis, `*${prefix}*`).catch(() => 0);
      await redis.quit().catch(() => undefined);
    }
    await db?.$disconnect().catch(() => undefined);
    await database?.drop().catch(() => undefined);
  }, 60_000);

  async function call(
    api: number,
    method: string,
    path: string,
    apiKey: string,
    body?: unknown,
  ): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
    const res = await fetch(`${apiUrls[api]}${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${apiKey}`,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(120_000),
    });
    const text = await res.text();
    let parsed: Record<string, unknown> = {};
    try {
      parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    } catch {
      parsed = { raw: text };
    }
    return { status: res.status, headers: res.headers, body: parsed };
  }

  it('Variant B rate limits are one counter shared by both APIs', async () => {
    const seen: { api: number; status: number; limit: string | null; remaining: string | null }[] = [];
    // Alternating api-1, api-2, api-1, ... with the same key: one more request than the limit.
    for (let i = 0; i <= FREE_PER_MINUTE; i += 1) {
      const res = await call(i % 2, 'GET', '/v1/posts?limit=1', freeKey.key);
      seen.push({
        api: i % 2,
        status: res.status,
        limit: res.headers.get('x-ratelimit-limit'),
        remaining: res.headers.get('x-ratelimit-remaining'),
      });
      if (res.status === 429) {
        expect(res.body.code).toBe('rate_limited');
        expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      }
    }
    // The other process refuses too: the window is used up everywhere.
    const after = await call(FREE_PER_MINUTE % 2 === 0 ? 1 : 0, 'GET', '/v1/posts?limit=1', freeKey.key);
    console.log(
      `scale-out rate limit (free tier ${FREE_PER_MINUTE}/min), alternating APIs: ` +
        seen.map((s) => `api-${s.api + 1}:${s.status}/${s.remaining}`).join(' ') +
        `; then api-${FREE_PER_MINUTE % 2 === 0 ? 2 : 1}:${after.status}`,
    );
    expect(seen.map((s) => s.status)).toEqual([...Array(FREE_PER_MINUTE).fill(200), 429]);
    expect(seen.map((s) => s.limit)).toEqual(Array(FREE_PER_MINUTE + 1).fill(String(FREE_PER_MINUTE)));
    expect(seen.map((s) => Number(s.remaining))).toEqual([
      ...Array.from({ length: FREE_PER_MINUTE }, (_, i) => FREE_PER_MINUTE - 1 - i),
      0,
    ]);
    expect(after.status).toBe(429);
    // One counter in Redis holds every request of both processes (refused ones count too).
    expect(await redis!.get(`${prefix}:rl:b:key-minute:${freeKey.keyId}`)).toBe(String(FREE_PER_MINUTE + 2));
  }, 60_000);

  it(`publishes ${POSTS} posts through both APIs and both publishers: all published, nothing twice`, async () => {
    const planned: TPlanned[] = Array.from({ length: POSTS }, (_, index) => {
      const kind = KINDS[index % KINDS.length]!;
      const variantA = kind.startsWith('a-');
      const sets = variantA ? A_PLATFORMS : B_PLATFORMS;
      const platforms = sets[(index + Math.floor(index / KINDS.length)) % sets.length]!;
      // Every fourth post is a thread of three.
      const segments = index % 4 === 0 ? 3 : 1;
      return {
        index,
        kind,
        api: (index % 2) as 0 | 1,
        key: proKeys[index % proKeys.length]!,
        platforms,
        // Letters and digits only (LinkedIn escapes brackets); `s…x` ends it, so p1 is no part of p10.
        tokens: Array.from({ length: segments }, (_, s) => `so${run}p${index}s${s}x`),
      };
    });
    const other = (api: 0 | 1) => (api === 0 ? 1 : 0);
    const failures: string[] = [];
    const expectStatus = (
      p: TPlanned,
      what: string,
      res: { status: number; body: unknown },
      want: number,
    ) => {
      if (res.status !== want)
        failures.push(`post ${p.index} (${p.kind}) ${what}: ${res.status} ${JSON.stringify(res.body)}`);
    };

    async function createAndPublish(p: TPlanned): Promise<void> {
      const text = (s: number) => `scale-out ${p.tokens[s]} ${s === 0 ? 'main' : `reply ${s}`}`;
      const replies = p.tokens.slice(1).map((_, s) => ({ content: text(s + 1) }));
      if (p.kind.startsWith('b-')) {
        const body: Record<string, unknown> = { content: text(0), platforms: p.platforms };
        if (replies.length > 0) body.segments = replies;
        if (p.kind === 'b-scheduled') {
          p.scheduledFor = new Date(Date.now() + SCHEDULE_AHEAD_MS).toISOString();
          body.scheduled_for = p.scheduledFor;
        }
        const created = await call(p.api, 'POST', '/v1/posts', p.key, body);
        expectStatus(p, 'create B', created, 201);
        p.id = created.body.id as string | undefined;
        if (!p.id || p.kind === 'b-scheduled') return;
        // Published through the other API process than the one that created it.
        const published = await call(other(p.api), 'POST', `/v1/posts/${p.id}/publish`, p.key);
        expectStatus(p, 'publish B', published, 200);
        return;
      }
      const body: Record<string, unknown> = { content: text(0), platforms: p.platforms };
      if (replies.length > 0) body.segments = replies;
      if (p.kind === 'a-now') body.published = true;
      if (p.kind === 'a-scheduled') {
        p.scheduledFor = new Date(Date.now() + SCHEDULE_AHEAD_MS).toISOString();
        body.scheduledFor = p.scheduledFor;
      }
      const created = await call(p.api, 'POST', '/api/posts', p.key, body);
      expectStatus(p, 'create A', created, 201);
      p.id = (created.body.post as { id?: string } | undefined)?.id;
      if (!p.id || p.kind !== 'a-publish') return;
      const published = await call(other(p.api), 'POST', `/api/posts/${p.id}/publish`, p.key);
      expectStatus(p, 'publish A', published, 200);
    }

    const startedAt = Date.now();
    // 16 requests in flight at a time, spread over both APIs.
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < planned.length) {
          const p = planned[next++]!;
          await createAndPublish(p);
        }
      }),
    );
    const requestedAt = Date.now();
    if (failures.length > 0) throw new Error(`${failures.join('\n')}\n${outputs()}`);
    const ids = planned.map((p) => p.id!);

    const finalCount = async () =>
      db!.post.count({ where: { id: { in: ids }, status: { in: ['published', 'failed'] } } });
    try {
      await waitUntil(
        'every post to be final',
        async () => (await finalCount()) === ids.length,
        240_000,
        500,
      );
    } catch (error) {
      const rows = await db!.post.groupBy({
        by: ['status'],
        where: { id: { in: ids } },
        _count: { _all: true },
      });
      throw new Error(
        `${(error as Error).message}: ${JSON.stringify(rows.map((r) => [r.status, r._count._all]))}\n${outputs()}`,
      );
    }
    const finishedAt = Date.now();
    // Nothing crashed on the way.
    expect(children.filter((c) => !c.running()).map((c) => `${c.name}\n${c.output()}`)).toEqual([]);

    // Every post reads as published through the API (both processes, both variants).
    const notPublished: string[] = [];
    for (const p of planned) {
      if (p.kind.startsWith('b-')) {
        const res = await call(p.index % 2, 'GET', `/v1/posts/${p.id}`, p.key);
        const results = (res.body.platform_results ?? {}) as Record<string, { success?: boolean }>;
        const ok =
          res.status === 200 &&
          res.body.status === 'published' &&
          p.platforms.every((platform) => results[platform]?.success === true);
        if (!ok) notPublished.push(`${p.kind} ${p.index}: ${JSON.stringify(res.body)}`);
        if (p.scheduledFor && ok && Date.parse(res.body.published_at as string) < Date.parse(p.scheduledFor))
          notPublished.push(`${p.kind} ${p.index} published before its time: ${JSON.stringify(res.body)}`);
      } else {
        const res = await call(p.index % 2, 'GET', `/api/posts/${p.id}`, p.key);
        const post = (res.body.post ?? {}) as {
          published?: boolean;
          platformPostIds?: Record<string, unknown>;
        };
        const ok =
          res.status === 200 &&
          post.published === true &&
          p.platforms.every((platform) => {
            const entry = post.platformPostIds?.[platform] as { id?: string } | undefined;
            return typeof entry?.id === 'string';
          });
        if (!ok) notPublished.push(`${p.kind} ${p.index}: ${JSON.stringify(res.body)}`);
      }
    }
    expect(notPublished).toEqual([]);

    // What the networks received: posts they hold and create calls, per (network, segment token).
    const simPosts = ((await (await fetch(`${simUrl}/__sim/posts`)).json()) as { posts: TSimPostView[] })
      .posts;
    const simRequests = (
      (await (await fetch(`${simUrl}/__sim/requests`)).json()) as { requests: TSimRequestView[] }
    ).requests;
    const tokenPattern = new RegExp(`so${run}p\\d+s\\d+x`, 'g');
    const held = new Map<string, number>();
    for (const post of simPosts) {
      for (const token of post.text.match(tokenPattern) ?? [])
        held.set(`${post.platform}|${token}`, (held.get(`${post.platform}|${token}`) ?? 0) + 1);
    }
    const calls = new Map<string, number>();
    for (const req of simRequests) {
      if (req.method !== 'POST') continue;
      for (const token of new Set(JSON.stringify(req.body ?? null).match(tokenPattern) ?? []))
        calls.set(`${req.platform}|${token}`, (calls.get(`${req.platform}|${token}`) ?? 0) + 1);
    }
    const expected = planned.flatMap((p) =>
      p.platforms.flatMap((platform) => p.tokens.map((t) => `${platform}|${t}`)),
    );
    const missing = expected.filter((k) => (held.get(k) ?? 0) === 0);
    const heldTwice = expected.filter((k) => (held.get(k) ?? 0) > 1);
    const calledTwice = expected.filter((k) => (calls.get(k) ?? 0) > 1);
    const unexpected = [...held.keys()].filter((k) => !expected.includes(k));
    const deliveries = await db!.segmentDelivery.groupBy({
      by: ['status'],
      where: { postId: { in: ids } },
      _count: { _all: true },
    });
    const workers = {
      publish: await queues!.publish.getWorkersCount(),
      schedule: await queues!.schedule.getWorkersCount(),
    };
    const byKind = Object.fromEntries(KINDS.map((k) => [k, planned.filter((p) => p.kind === k).length]));
    console.log(
      `scale-out: ${planned.length} posts (${Object.entries(byKind)
        .map(([k, n]) => `${n} ${k}`)
        .join(
          ', ',
        )}; ${planned.filter((p) => p.tokens.length > 1).length} threads of 3) = ${expected.length} ` +
        `(network, segment) deliveries through 2 APIs and 2 publishers (workers seen: publish ${workers.publish}, ` +
        `schedule ${workers.schedule}); requests done in ${((requestedAt - startedAt) / 1000).toFixed(1)} s, all final after ` +
        `${((finishedAt - startedAt) / 1000).toFixed(1)} s; networks hold ${expected.length - missing.length}/${expected.length}, ` +
        `held twice ${heldTwice.length}, create calls twice ${calledTwice.length}, unexpected ${unexpected.length}; ` +
        `segment rows ${JSON.stringify(Object.fromEntries(deliveries.map((d) => [d.status, d._count._all])))}`,
    );
    expect(missing).toEqual([]);
    expect(heldTwice).toEqual([]);
    expect(calledTwice).toEqual([]);
    expect(unexpected).toEqual([]);
    expect(deliveries.map((d) => [d.status, d._count._all])).toEqual([['sent', expected.length]]);
  }, 420_000);

  it('every queue key of the run carries the {prefix} hash tag (Redis Cluster slot)', async () => {
    // Every master of a cluster (SCAN sees one node's keys only), or the one server.
    const keys = await keysMatching(redis!, `*${prefix}*`);
    const tag = bullPrefix(prefix);
    const tagged = keys.filter((k) => k.startsWith(`${tag}:`));
    const untagged = keys.filter((k) => !k.startsWith(`${tag}:`));
    const queueNames = [...new Set(tagged.map((k) => k.split(':')[1]))].sort();
    // Rate-limit counters are single keys (rate-limiter-flexible touches KEYS[1] only), so they need no
    // shared slot and stay spread over the cluster; everything else (BullMQ's multi-key scripts) must be tagged.
    const counters = untagged.filter((k) => k.startsWith(`${prefix}:rl:`));
    const strays = untagged.filter((k) => !k.startsWith(`${prefix}:rl:`));
    console.log(
      `scale-out redis: ${keys.length} keys with "${prefix}": ${tagged.length} under ${tag}: (queues ${queueNames.join(', ')}); ` +
        `${counters.length} single-key rate-limit counters under ${prefix}:rl:; ${strays.length} other keys`,
    );
    expect(queueNames).toEqual(expect.arrayContaining(['publish', 'schedule']));
    expect(tagged.length).toBeGreaterThan(50);
    expect(strays).toEqual([]);
  }, 60_000);

  it('both APIs and both publishers stop cleanly on SIGTERM', async () => {
    const stopping = [...apis, ...publishers];
    const results = await Promise.all(
      stopping.map(async (c) => {
        c.child.kill('SIGTERM');
        let timer: NodeJS.Timeout | undefined;
        const exit = await Promise.race([
          c.exited,
          new Promise<null>((r) => {
            timer = setTimeout(() => r(null), 30_000);
          }),
        ]);
        clearTimeout(timer);
        return { name: c.name, exit };
      }),
    );
    expect(results).toEqual(stopping.map((c) => ({ name: c.name, exit: { code: 0, signal: null } })));
    apis = [];
    publishers = [];
  }, 60_000);
});
