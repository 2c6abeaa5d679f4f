// POST /v1/posts throughput and latency at 50 connections, next to bare Express 5 handlers inserting the
// same row, measured in the same run (`npm run bench:posts`, after `npm run build`):
//   - the baseline: one plain `pg` INSERT … RETURNING (bench/servers/bare-pg-insert.mjs);
//   - a second line: one Prisma insert (bench/servers/bare-insert.mjs), what the create path used to cost;
//   - the service with its rate limits on (tiers raised so the bench is never refused, but every request is
//     counted in Redis as in production).
// Targets: the service at >= 0.8x the pg baseline's req/s, p99 within 1.5x of the baseline's.
// BENCH_DURATION (seconds, default 10), BENCH_CONNECTIONS (default 50).
import { resolve } from 'node:path';
import { createDb } from '@sps/db';
import { benchAccount, freshDatabase, report, root, run, startServer } from './lib.mjs';

const duration = Number(process.env.BENCH_DURATION ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const url = await freshDatabase('sps_bench_posts');

const db = createDb(url, { poolMax: 2 });
const { account, key } = await benchAccount(db);
await db.$disconnect();

const body = JSON.stringify({
  content: 'Benchmark post https://example.com/a',
  platforms: ['twitter', 'bluesky'],
});
const env = {
  DATABASE_URL: url,
  BENCH_ACCOUNT_ID: account.id,
  QUEUE_PREFIX: 'sps-bench',
  DB_POOL_MAX: '10',
  // Limits on, as in production: the limiter's Redis call is part of what is measured. The pro tier is
  // raised so that the bench's own key is never refused (a 429 would be a cheaper answer).
  RATE_LIMITS: 'on',
  RATE_LIMIT_B_TIERS: 'free=60/10,starter=300/60,pro=10000000/300',
};

async function measure(script, path, headers = {}) {
  const server = await startServer(resolve(root, script), env);
  try {
    return await run({
      url: `http://127.0.0.1:${server.port}${path}`,
      method: 'POST',
      body,
      headers,
      duration,
      connections,
    });
  } finally {
    await server.stop();
  }
}

const pgResult = await measure('bench/servers/bare-pg-insert.mjs', '/posts');
const prismaResult = await measure('bench/servers/bare-insert.mjs', '/posts');
const apiResult = await measure('bench/servers/api.mjs', '/v1/posts', { authorization: `Bearer ${key.key}` });

report(
  `POST /v1/posts vs bare inserts, ${connections} connections, ${duration}s each (after a 3s warm-up)`,
  [
    ['baseline: express 5 + pg INSERT', pgResult],
    ['express 5 + prisma insert', prismaResult],
    ['POST /v1/posts (limits on)', apiResult],
  ],
  [
    ['ratio req/s (api / pg baseline), target >= 0.8', apiResult.rps / pgResult.rps],
    ['ratio p99 (api / pg baseline), target <= 1.5', apiResult.p99 / pgResult.p99],
    ['ratio req/s (api / prisma insert)', apiResult.rps / prismaResult.rps],
  ],
);
// A run with failed requests measures the wrong thing: say so and fail.
const failed = [pgResult, prismaResult, apiResult].reduce((n, r) => n + r.non2xx + r.errors, 0);
if (failed > 0) console.error(`${failed} requests did not answer 2xx: the figures above are not valid`);
process.exit(failed > 0 ? 1 : 0);
