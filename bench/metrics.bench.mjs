// Metrics collection at scale (`npm run bench:metrics`, after `npm run build`): BENCH_METRICS_POSTS
// (10,000) published posts over BENCH_METRICS_ACCOUNTS (100) accounts, each post on X, YouTube, Mastodon
// and TikTok (the simulator), all due for their first collection. The publisher's metrics worker collects
// them as in production (reconciler -> metrics-collect jobs per connected account -> batched reads); the
// bench prints the read calls each network received against the minimum its batch size allows
// (accounts x ceil(posts per account / batch)), and the time from the first reconcile to the last snapshot.
import { randomBytes } from 'node:crypto';
import { secretBox } from '@sps/core';
import { createDb } from '@sps/db';
import { simFiguresOf, startNetworkSim } from '@sps/network-sim';
import { createConnectors } from '@sps/networks';
import { createQueues, createRedisFactory } from '@sps/queue';
import { Redis } from 'ioredis';
import pg from 'pg';
import { pino } from 'pino';
import { createPublisher } from '../apps/publisher/dist/publisher.js';
import { freshDatabase } from './lib.mjs';

const POSTS = Number(process.env.BENCH_METRICS_POSTS ?? 10_000);
const ACCOUNTS = Number(process.env.BENCH_METRICS_ACCOUNTS ?? 100);
const CONCURRENCY = Number(process.env.METRICS_CONCURRENCY ?? 4);
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `sps-bench-metrics-${randomBytes(3).toString('hex')}`;
const KEY = randomBytes(32);
/** Network, batch size of its reader, and how a remote id of the n-th post looks there. */
const NETWORKS = [
  { platform: 'twitter', batch: 100, id: (n) => String(1_800_000_000_000_000_000n + BigInt(n)) },
  { platform: 'youtube', batch: 50, id: (n) => `v${String(n).padStart(10, '0')}` },
  { platform: 'mastodon', batch: 20, id: (n) => String(113_000_000_000_000_000n + BigInt(n)) },
  { platform: 'tiktok', batch: 20, id: (n) => String(7_400_000_000_000_000_000n + BigInt(n)) },
];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const running = await startNetworkSim();
const url = await freshDatabase('sps_bench_metrics');
const sql = new pg.Client({ connectionString: url });
await sql.connect();

// Seed: accounts, their connections, posts published two hours ago (past the first collection time, 1h).
const perAccount = Math.ceil(POSTS / ACCOUNTS);
const publishedAt = new Date(Date.now() - 2 * 3_600_000);
const seedStarted = Date.now();
const accountIds = [];
for (let a = 0; a < ACCOUNTS; a += 1) {
  const { rows } = await sql.query(
    `INSERT INTO accounts (id, name, owner_email, plan, updated_at) VALUES (gen_random_uuid(), $1, $2, 'pro', now()) RETURNING id`,
    [`bench-${a}`, `bench-${a}@example.com`],
  );
  accountIds.push(rows[0].id);
}
const social = {};
for (const { platform } of NETWORKS) {
  // v1 seal (no row binding), which still opens: one value for all of a network's rows, inserted in one statement.
  const sealed = secretBox.sealV1(JSON.stringify({ token: `bench-${platform}` }), KEY);
  const { rows } = await sql.query(
    `INSERT INTO social_accounts (id, account_id, platform, account_name, instance_url, credentials_encrypted, updated_at)
     SELECT gen_random_uuid(), a, $1::"Platform", $1 || '-user', $2, $3, now() FROM unnest($4::uuid[]) AS a
     RETURNING id, account_id`,
    [platform, platform === 'mastodon' ? running.baseUrls.mastodon : null, sealed, accountIds],
  );
  social[platform] = new Map(rows.map((r) => [r.account_id, r.id]));
}
let n = 0;
for (const accountId of accountIds) {
  const count = Math.min(perAccount, POSTS - n);
  if (count <= 0) break;
  const { rows } = await sql.query(
    `INSERT INTO posts (id, account_id, content, platforms, status, published_at, updated_at)
     SELECT gen_random_uuid(), $1, 'bench', ARRAY['twitter','youtube','mastodon','tiktok']::"Platform"[], 'published', $2, now()
     FROM generate_series(1, $3) RETURNING id`,
    [accountId, publishedAt, count],
  );
  for (const { platform, id } of NETWORKS) {
    const remote = rows.map((_, i) => id(n + i));
    await sql.query(
      `INSERT INTO post_targets (id, post_id, platform, social_account_id, status, remote_post_id, published_at, updated_at)
       SELECT gen_random_uuid(), p, $1::"Platform", $2, 'succeeded', r, $3, now() FROM unnest($4::uuid[], $5::text[]) AS t(p, r)`,
      [platform, social[platform].get(accountId), publishedAt, rows.map((r) => r.id), remote],
    );
    for (const remoteId of remote) {
      running.sim.addPost({
        platform,
        remoteId,
        text: 'bench',
        replyTo: null,
        media: null,
        idempotencyKey: null,
      });
      simFiguresOf(running.sim).set(platform, remoteId, { likes: 1, views: 10 });
    }
  }
  n += count;
}
await sql.end();
console.log(
  `seeded ${n} posts x ${NETWORKS.length} networks over ${ACCOUNTS} accounts in ${Date.now() - seedStarted} ms`,
);

const db = createDb(url, { poolMax: 10 });
const redisFactory = createRedisFactory({ url: REDIS_URL });
const connection = redisFactory.worker();
const queues = createQueues(redisFactory.worker(), PREFIX);
const publisher = await createPublisher({
  db,
  connection,
  queues,
  queuePrefix: PREFIX,
  connectors: createConnectors({ baseUrls: running.baseUrls, timeoutMs: 10_000 }),
  logger: pino({ level: 'warn' }),
  encryptionKey: KEY,
  concurrency: 10,
  backoffBaseMs: 1000,
  reconcileEveryMs: 3_600_000,
  metricsConcurrency: CONCURRENCY,
});

const readPaths = {
  twitter: '/2/tweets?',
  youtube: '/youtube/v3/videos?',
  mastodon: '/api/v1/statuses',
  tiktok: '/v2/video/query',
};
const reads = (platform) =>
  running.sim.requests.filter((r) => r.platform === platform && r.path.includes(readPaths[platform])).length;

const started = Date.now();
let snapshots = 0;
const expected = n * NETWORKS.length;
while (snapshots < expected && Date.now() - started < 15 * 60_000) {
  await publisher.reconcileNow();
  for (;;) {
    const c = await queues.metrics.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
    if (Object.values(c).every((v) => v === 0)) break;
    await sleep(100);
  }
  snapshots = await db.metricSnapshot.count();
}
const elapsed = Date.now() - started;

console.log(
  `\ncollected ${snapshots} of ${expected} snapshots in ${elapsed} ms (${Math.round((snapshots / elapsed) * 1000)}/s), METRICS_CONCURRENCY=${CONCURRENCY}`,
);
console.log('network   | read calls | minimum (accounts x ceil(posts/batch)) | batch');
for (const { platform, batch } of NETWORKS) {
  const minimum = ACCOUNTS * Math.ceil(perAccount / batch);
  console.log(
    `${platform.padEnd(9)} | ${String(reads(platform)).padStart(10)} | ${String(minimum).padStart(38)} | ${batch}`,
  );
}

await publisher.close();
await queues.close();
const redis = new Redis(REDIS_URL);
const keys = await redis.keys(`*${PREFIX}*`);
if (keys.length > 0) await redis.del(...keys);
await redis.quit();
await connection.quit();
await db.$disconnect();
await running.close();
process.exit(snapshots === expected ? 0 : 1);
