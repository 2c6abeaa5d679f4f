// Unauthenticated floods: made-up, well-formed API keys against /v1/posts, from one address and from a
// fresh address per request (TRUST_PROXY=1, X-Forwarded-For), and what they cost: the PostgreSQL
// transactions they caused (pg_stat_database.xact_commit of the bench's own database, read after the
// backends flushed their statistics) and the latency of a valid key's GET /v1/posts/{id} meanwhile.
// `npm run bench:auth-flood` (after `npm run build`); BENCH_DURATION tunes each phase (seconds).
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { createDb } from '@sps/db';
import autocannon from 'autocannon';
import pg from 'pg';
import { benchAccount, freshDatabase, root, startServer } from './lib.mjs';

const duration = Number(process.env.BENCH_DURATION ?? 8);
const name = 'sps_bench_auth_flood';
const url = await freshDatabase(name);
const db = createDb(url, { poolMax: 2 });
const { account, key } = await benchAccount(db);
const post = await db.post.create({
  data: { accountId: account.id, content: 'Benchmark post', platforms: ['twitter'], status: 'draft' },
});
await db.$disconnect();

const server = await startServer(resolve(root, 'bench/servers/api.mjs'), {
  DATABASE_URL: url,
  DB_POOL_MAX: '10',
  QUEUE_PREFIX: `sps-bench-auth-${Date.now()}`,
  RATE_LIMIT_B_TIERS: 'pro=1000000000/300',
  TRUST_PROXY: '1',
});
const base = `http://127.0.0.1:${server.port}`;

const stats = new pg.Client({ connectionString: url });
await stats.connect();
/** Committed transactions of the bench database, once every backend has flushed (PostgreSQL 15: ≤ 10 s idle). */
async function transactions() {
  await new Promise((r) => setTimeout(r, 11_000));
  await stats.query('SELECT pg_stat_clear_snapshot()');
  const { rows } = await stats.query('SELECT xact_commit FROM pg_stat_database WHERE datname = $1', [name]);
  return Number(rows[0].xact_commit);
}

const madeUp = () => `sps_live_${randomBytes(32).toString('base64url')}`;
let n = 0;
const fresh = () => `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n++ & 255}`;

function flood(address) {
  return autocannon({
    url: `${base}/v1/posts`,
    connections: 64,
    duration,
    requests: [
      {
        setupRequest: (req) => ({
          ...req,
          headers: { ...req.headers, authorization: `Bearer ${madeUp()}`, 'x-forwarded-for': address() },
        }),
      },
    ],
  });
}

function validKey() {
  return autocannon({
    url: `${base}/v1/posts/${post.id}`,
    connections: 4,
    duration,
    headers: { authorization: `Bearer ${key.key}`, 'x-forwarded-for': '198.51.100.200' },
  });
}

const statuses = (r) =>
  Object.entries(r.statusCodeStats ?? {})
    .map(([code, s]) => `${code}:${s.count}`)
    .join(' ');

await validKey(); // warm-up: JIT, pool, the key cached
const quiet = await validKey();
console.log(
  `valid key alone:        p50 ${quiet.latency.p50} ms  p99 ${quiet.latency.p99} ms  ${quiet.requests.average.toFixed(0)} req/s  non-2xx ${quiet.non2xx}`,
);

for (const [label, address] of [
  ['one address', () => '203.0.113.66'],
  ['a fresh address each', fresh],
]) {
  const before = await transactions();
  const alone = await flood(address);
  const caused = (await transactions()) - before;
  const [during, valid] = await Promise.all([flood(address), validKey()]);
  console.log(
    `flood from ${label}: ${alone.requests.total} made-up keys caused ${caused} PostgreSQL transactions ` +
      `(answers ${statuses(alone)}); valid key meanwhile: p50 ${valid.latency.p50} ms  p99 ${valid.latency.p99} ms  ` +
      `non-2xx ${valid.non2xx} errors ${valid.errors} (flood ${statuses(during)})`,
  );
}
await stats.end();
await server.stop();
