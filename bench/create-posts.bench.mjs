// POST /v1/posts throughput and latency at 50 connections, next to a bare Express handler doing one
// Prisma insert of the same row, measured in the same run. `npm run bench:posts` (after `npm run build`).
import { resolve } from 'node:path';
import { createDb } from '@sps/db';
import { benchAccount, freshDatabase, report, root, run, startServer } from './lib.mjs';

const duration = Number(process.env.BENCH_DURATION ?? 10);
const url = await freshDatabase('sps_bench_posts');

const db = createDb(url, { poolMax: 2 });
const { account, key } = await benchAccount(db);
await db.$disconnect();

const body = JSON.stringify({
  content: 'Benchmark post https://example.com/a',
  platforms: ['twitter', 'bluesky'],
});
// Limits off: this measures the create path; bench:limits measures what the limiter costs.
const env = {
  DATABASE_URL: url,
  BENCH_ACCOUNT_ID: account.id,
  QUEUE_PREFIX: 'sps-bench',
  DB_POOL_MAX: '10',
  RATE_LIMITS: 'off',
};

const bare = await startServer(resolve(root, 'bench/servers/bare-insert.mjs'), env);
const bareResult = await run({ url: `http://127.0.0.1:${bare.port}/posts`, method: 'POST', body, duration });
await bare.stop();

const api = await startServer(resolve(root, 'bench/servers/api.mjs'), env);
const apiResult = await run({
  url: `http://127.0.0.1:${api.port}/v1/posts`,
  method: 'POST',
  body,
  headers: { authorization: `Bearer ${key.key}` },
  duration,
});
await api.stop();

report(
  `POST /v1/posts vs bare insert, 50 connections, ${duration}s each (after a 3s warm-up)`,
  [
    ['bare express + prisma insert', bareResult],
    ['POST /v1/posts (full stack)', apiResult],
  ],
  [['ratio (api / bare)', apiResult.rps / bareResult.rps]],
);
// A run with failed requests measures the wrong thing: say so and fail.
const failed = apiResult.non2xx + apiResult.errors + bareResult.non2xx + bareResult.errors;
if (failed > 0) console.error(`${failed} requests did not answer 2xx: the figures above are not valid`);
process.exit(failed > 0 ? 1 : 0);
