import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { API_KEY_PREFIX } from '@sps/core';
import { createDb, type TDb } from '@sps/db';
import { createTestAccount, createTestDatabase, type TTestDatabase, testPrefix } from '@sps/db/testing';
import { Redis } from 'ioredis';
import { freePort, metricSample, startNode, type TChild, waitUntil } from './processes.js';

// Unauthenticated load (issue #15) against the real API process: floods of made-up, well-formed keys on
// /v1 and /mcp. Every such key used to cost a database query, without limit. Now failures are limited per
// client address, unknown keys are remembered, and lookups of unknown keys take turns through a gate of
// DB_POOL_MAX/4 connections, so a valid key keeps being answered. The database lookups are counted by the
// API's own api_key_lookups_total; bench/auth-flood.bench.mjs counts them in PostgreSQL itself.

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const ADMIN_TOKEN = 'operator-token-abuse-auth';
const FAILURES_PER_MINUTE = 30;
const FLOOD = 600;
const CONCURRENCY = 30;

const madeUpKey = () => `${API_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

/** Runs `count` calls of `one`, `concurrency` at a time; their statuses. */
async function pool(count: number, concurrency: number, one: (i: number) => Promise<number>) {
  const statuses: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        statuses.push(await one(i));
      }
    }),
  );
  return statuses;
}

describe('unauthenticated floods against the real API', () => {
  const prefix = testPrefix('abuseauth');
  let database: TTestDatabase | undefined;
  let db: TDb | undefined;
  let api: TChild | undefined;
  let url = '';
  let valid = { key: '', keyId: '', postId: '' };

  beforeAll(async () => {
    database = await createTestDatabase();
    db = createDb(database.url, { poolMax: 2 });
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    api = startNode('api', 'apps/api/dist/main.js', {
      NODE_ENV: 'production',
      DATABASE_URL: database.url,
      REDIS_URL,
      QUEUE_PREFIX: prefix,
      ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      LOG_LEVEL: 'fatal',
      PORT: String(port),
      HOST: '127.0.0.1',
      ADMIN_TOKEN,
      // A small pool makes exhaustion easy to cause: one connection for unknown keys, three for the rest.
      DB_POOL_MAX: '4',
      // One proxy in front: the test writes the client address in X-Forwarded-For.
      TRUST_PROXY: '1',
      AUTH_FAILURES_PER_MINUTE: String(FAILURES_PER_MINUTE),
      RATE_LIMIT_B_TIERS: 'pro=100000/1000',
      API_KEY_CACHE_TTL: '60s',
    });
    const account = await createTestAccount(db, 'pro', 'abuse auth');
    valid = { key: account.apiKey, keyId: account.keyId, postId: '' };
    await waitUntil('api ready', async () => (await fetch(`${url}/readyz`)).status === 200, 90_000).catch(
      (error: Error) => {
        throw new Error(`${error.message}\n${api?.output()}`);
      },
    );
    const created = await fetch(`${url}/v1/posts`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${valid.key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ content: 'the valid key reads this', platforms: ['twitter'] }),
    });
    valid.postId = ((await created.json()) as { id: string }).id;
  }, 120_000);

  afterAll(async () => {
    await api?.stop(5_000);
    await db?.$disconnect().catch(() => undefined);
    await database?.drop().catch(() => undefined);
  }, 60_000);

  async function lookups(): Promise<number> {
    const res = await fetch(`${url}/metrics`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
    const text = await res.text();
    return ['found', 'unknown', 'busy'].reduce(
      (sum, outcome) => sum + (metricSample(text, 'api_key_lookups_total', { outcome }) ?? 0),
      0,
    );
  }

  const flooder = (key: () => string, address: (i: number) => string) => async (i: number) => {
    // Half on /v1, half on the MCP endpoint: both authenticate the same way.
    const mcp = i % 2 === 1;
    const res = await fetch(`${url}${mcp ? '/mcp' : '/v1/posts'}`, {
      method: mcp ? 'POST' : 'GET',
      headers: {
        Authorization: `Bearer ${key()}`,
        'X-Forwarded-For': address(i),
        ...(mcp ? { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' } : {}),
      },
      ...(mcp ? { body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) } : {}),
    });
    await res.arrayBuffer();
    return res.status;
  };

  /** The valid key's GETs, one after another until `done` settles: latencies and statuses. */
  async function validWhile(done: Promise<unknown>, atLeast = 50) {
    let finished = false;
    void done.finally(() => {
      finished = true;
    });
    const ms: number[] = [];
    const statuses: number[] = [];
    while (!finished || ms.length < atLeast) {
      const start = performance.now();
      const res = await fetch(`${url}/v1/posts/${valid.postId}`, {
        headers: { Authorization: `Bearer ${valid.key}`, 'X-Forwarded-For': '198.51.100.200' },
      });
      await res.arrayBuffer();
      ms.push(performance.now() - start);
      statuses.push(res.status);
    }
    return { ms, statuses };
  }

  it('one address flooding /v1 and /mcp with made-up keys: a few lookups, then 429 before the database', async () => {
    const before = await lookups();
    const statuses = await pool(
      FLOOD,
      CONCURRENCY,
      flooder(madeUpKey, () => '203.0.113.66'),
    );
    const caused = (await lookups()) - before;
    const refused = statuses.filter((s) => s === 429).length;
    console.log(
      `auth flood, one address: ${FLOOD} made-up keys caused ${caused} key lookups in PostgreSQL ` +
        `(${statuses.filter((s) => s === 401).length} answered 401, ${refused} answered 429)`,
    );
    expect(statuses.every((s) => s === 401 || s === 429)).toBe(true);
    // The limit, plus what was in flight when it was reached.
    expect(caused).toBeLessThanOrEqual(FAILURES_PER_MINUTE + CONCURRENCY);
    expect(refused).toBeGreaterThanOrEqual(FLOOD - FAILURES_PER_MINUTE - CONCURRENCY);
  }, 120_000);

  it('the same made-up key from many addresses is looked up once', async () => {
    const key = madeUpKey();
    const before = await lookups();
    const statuses = await pool(
      200,
      CONCURRENCY,
      flooder(
        () => key,
        (i) => `192.0.2.${i % 250}`,
      ),
    );
    expect(statuses.every((s) => s === 401)).toBe(true);
    // Concurrent first requests may each miss the negative cache before the first answer lands.
    expect((await lookups()) - before).toBeLessThanOrEqual(CONCURRENCY);
  }, 120_000);

  it('a valid key keeps being answered while made-up keys arrive from many addresses', async () => {
    const quiet = await validWhile(Promise.resolve(), 100);
    expect(quiet.statuses.every((s) => s === 200)).toBe(true);
    const flood = pool(
      FLOOD,
      CONCURRENCY,
      // Every request from a fresh address: the per-address limit cannot help, the gate must.
      flooder(madeUpKey, (i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`),
    );
    const loaded = await validWhile(flood);
    const statuses = await flood;
    console.log(
      `valid key GET /v1/posts/{id}: p50 ${percentile(quiet.ms, 50).toFixed(1)} ms / p99 ` +
        `${percentile(quiet.ms, 99).toFixed(1)} ms without a flood; p50 ${percentile(loaded.ms, 50).toFixed(1)} ms / ` +
        `p99 ${percentile(loaded.ms, 99).toFixed(1)} ms during ${FLOOD} made-up keys from as many addresses ` +
        `(${loaded.ms.length} requests; flood answered ${[...new Set(statuses)].join('/')})`,
    );
    expect(loaded.statuses.every((s) => s === 200)).toBe(true);
    expect(statuses.every((s) => s === 401 || s === 503)).toBe(true);
  }, 120_000);

  it('a revocation whose message was lost is noticed once the subscription reconnects', async () => {
    const { apiKey, keyId } = await createTestAccount(db!, 'pro', 'abuse revoke');
    const get = async () =>
      (await fetch(`${url}/v1/posts?limit=1`, { headers: { Authorization: `Bearer ${apiKey}` } })).status;
    expect(await get()).toBe(200); // now cached for API_KEY_CACHE_TTL (60 s)
    // Revoked in the database without the eviction message, as if it was sent while Redis was away.
    await db!.apiKey.update({ where: { id: keyId }, data: { revokedAt: new Date() } });
    expect(await get()).toBe(200);
    const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    try {
      const name = `${prefix}-key-revocations`;
      const clients = (await redis.client('LIST')) as string;
      const ids = clients
        .split('\n')
        .filter((line) => line.includes(` name=${name} `))
        .map((line) => /(?:^|\s)id=(\d+)/.exec(line)?.[1])
        .filter(Boolean) as string[];
      expect(ids).toHaveLength(1);
      await redis.client('KILL', 'ID', ids[0]!);
    } finally {
      await redis.quit();
    }
    // Well within the 60 s the cache would otherwise keep it.
    await waitUntil('the revoked key refused', async () => (await get()) === 401, 10_000, 100);
  }, 60_000);
});
