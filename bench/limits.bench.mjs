// GET /v1/posts/{id} throughput with the rate limits on and off, measured in the same run with the same
// pro key. The pro per-minute limit is raised for the "on" server (RATE_LIMIT_B_TIERS) so the run never
// hits it: the limiter does all its work (one Redis round trip, headers) but every answer is a 200.
// `npm run bench:limits` (after `npm run build`); BENCH_DURATION and BENCH_ROUNDS tune it.
import { resolve } from 'node:path';
import { createDb } from '@sps/db';
import { benchAccount, freshDatabase, report, root, run, startServer } from './lib.mjs';

const duration = Number(process.env.BENCH_DURATION ?? 8);
const rounds = Number(process.env.BENCH_ROUNDS ?? 4);
const url = await freshDatabase('sps_bench_limits');

const db = createDb(url, { poolMax: 2 });
const { account, key } = await benchAccount(db);
const post = await db.post.create({
  data: {
    accountId: account.id,
    content: 'Benchmark post https://example.com/a',
    platforms: ['twitter', 'bluesky'],
    status: 'draft',
  },
});
await db.$disconnect();

const base = { DATABASE_URL: url, DB_POOL_MAX: '10' };
const modes = {
  off: { ...base, RATE_LIMITS: 'off', QUEUE_PREFIX: 'sps-bench-limits-off' },
  on: {
    ...base,
    RATE_LIMITS: 'on',
    QUEUE_PREFIX: `sps-bench-limits-on-${Date.now()}`,
    RATE_LIMIT_B_TIERS: 'pro=1000000000/300',
  },
};

async function measure(mode) {
  const server = await startServer(resolve(root, 'bench/servers/api.mjs'), modes[mode]);
  const target = `http://127.0.0.1:${server.port}/v1/posts/${post.id}`;
  const probe = await fetch(target, { headers: { authorization: `Bearer ${key.key}` } });
  const limitHeader = probe.headers.get('x-ratelimit-limit');
  if (probe.status !== 200 || (mode === 'on') !== (limitHeader !== null)) {
    throw new Error(`${mode}: unexpected probe ${probe.status}, X-RateLimit-Limit ${limitHeader}`);
  }
  const result = await run({ url: target, headers: { authorization: `Bearer ${key.key}` }, duration });
  await server.stop();
  return result;
}

// Alternating rounds so drift (CPU frequency, PostgreSQL caches) does not favour one mode.
// Rounds alternate which mode goes first (off-on, on-off, ...), so drift over the run (PostgreSQL
// checkpoints, autovacuum, a warming page cache) falls on both modes alike; each round gives one ratio.
const results = { off: [], on: [] };
const roundRatios = [];
for (let i = 0; i < rounds; i += 1) {
  const order = i % 2 === 0 ? ['off', 'on'] : ['on', 'off'];
  const round = {};
  for (const mode of order) round[mode] = await measure(mode);
  results.off.push(round.off);
  results.on.push(round.on);
  roundRatios.push(round.on.rps / round.off.rps);
}
const sorted = [...roundRatios].sort((a, b) => a - b);
const median =
  sorted.length % 2 === 1
    ? sorted[(sorted.length - 1) / 2]
    : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
const mean = (list) => ({
  rps: list.reduce((s, r) => s + r.rps, 0) / list.length,
  p50: Math.max(...list.map((r) => r.p50)),
  p90: Math.max(...list.map((r) => r.p90)),
  p99: Math.max(...list.map((r) => r.p99)),
  non2xx: list.reduce((s, r) => s + r.non2xx, 0),
  errors: list.reduce((s, r) => s + r.errors, 0),
});
const off = mean(results.off);
const on = mean(results.on);
report(
  `GET /v1/posts/{id}, rate limits off vs on, 50 connections, ${rounds} x ${duration}s each (mean req/s, worst latency)`,
  [
    ['RATE_LIMITS=off', off],
    ['RATE_LIMITS=on (Redis limiter)', on],
  ],
  [
    ['ratio of the means (on / off, target >= 0.90)', on.rps / off.rps],
    ['median of the per-round ratios', median],
  ],
);
console.log(`per-round ratios: ${roundRatios.map((r) => r.toFixed(2)).join(', ')}`);
process.exit(0);
