// The 9 a.m. burst: many posts scheduled for the same second (`npm run bench:burst`, after `npm run build`).
// Each scenario gets a fresh database and queue prefix, then runs the real API, publisher(s) and webhooks
// processes against one simulator process (twitter answering at once):
//   1. ACCOUNTS tenants, each with a key and one connected twitter account;
//   2. POSTS scheduled posts created through POST /v1/posts, round robin over the tenants, all due at the
//      same whole second T (BENCH_BURST_LEAD after the start, default 60 s + 9 ms a post, so they exist
//      before it);
//   3. wait until every post is final; lateness = when the simulator received the post minus T
//      (`/__sim/posts` records the arrival time), p50/p90/p99/max;
//   4. exactly once: every post's marker is on the network exactly once, none missing, none twice, and every
//      post is `published` in PostgreSQL;
//   5. CPU seconds (user + system) and peak RSS of each process: while the posts were created, and from
//      then until the last post was final (the burst).
// Scenarios: BENCH_BURST_SCENARIOS, `posts x accounts x publishers` separated by commas
// (default `1000x20x1,10000x100x1,10000x100x2`). Targets: p99 < 1.5 s for 1,000 posts over 20 accounts,
// p99 < 15 s for 10,000 over 100, each exactly once.
// BENCH_PGBOUNCER_URL (what `.ci/pgbouncer` prints) runs the service's processes through that PgBouncer in
// transaction pooling mode; its CPU is then a row of its own.
// BENCH_BURST_ANALYZE=1 runs ANALYZE once the posts exist (what autovacuum does on a production database;
// CI's and this box's PostgreSQL run with autovacuum off, so otherwise every plan is made without statistics).
// BENCH_BURST_STATEMENTS=N prints the N statements that took PostgreSQL the most time from the end of the
// creation to the end of the burst (needs `pg_stat_statements` in shared_preload_libraries; the counters of
// the whole server are reset at the start).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { resolve } from 'node:path';
import { generateApiKey, parseDuration, secretBox } from '@sps/core';
import { createAccountRepository, createDb, createSocialAccountRepository } from '@sps/db';
import { Redis } from 'ioredis';
import pg from 'pg';
import {
  appsDatabaseUrl,
  freshDatabase,
  percentile,
  pgbouncerPid,
  pool,
  procStats,
  root,
  startServer,
} from './lib.mjs';

const SCENARIOS = (process.env.BENCH_BURST_SCENARIOS ?? '1000x20x1,10000x100x1,10000x100x2')
  .split(',')
  .map((s) => {
    const [posts, accounts, publishers] = s.split('x').map(Number);
    return { posts, accounts, publishers: publishers ?? 1 };
  });
// Long enough that every post exists before the due second, on a loaded 2-core box too.
const leadMs = (posts) =>
  process.env.BENCH_BURST_LEAD ? parseDuration(process.env.BENCH_BURST_LEAD) : 60_000 + posts * 9;
const CONNECTIONS = Number(process.env.BENCH_HTTP_CONNECTIONS ?? 50);
const ANALYZE = process.env.BENCH_BURST_ANALYZE === '1';
const STATEMENTS = Number(process.env.BENCH_BURST_STATEMENTS ?? 0);
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const children = new Set();
/** Pids of the servers started with startServer (simulator, API): killed too if the bench fails. */
const serverPids = new Set();
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
  for (const pid of serverPids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});
// A bench stopped by a signal exits through the handler above too (no orphaned servers).
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(1));

/** A worker app as the service runs it (`node apps/<app>/dist/main.js`); resolves once it logged `ready`. */
function startApp(app, ready, env) {
  return new Promise((resolvePromise, reject) => {
    const nodeArgs = (process.env.BENCH_PUBLISHER_NODE_ARGS ?? '').split(' ').filter(Boolean);
    const child = spawn(
      process.execPath,
      [...(app === 'publisher' ? nodeArgs : []), resolve(root, `apps/${app}/dist/main.js`)],
      { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    children.add(child);
    let buffered = '';
    // Keeps draining stdout (the info lines) after start-up, as a log shipper would.
    child.stdout.on('data', (chunk) => {
      if (buffered === null) return;
      buffered += chunk.toString();
      if (buffered.includes(`"${ready}"`)) {
        buffered = null;
        resolvePromise({
          pid: child.pid,
          stop: () =>
            new Promise((done) => {
              if (child.exitCode !== null || child.signalCode !== null) return done();
              const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
              child.once('exit', () => {
                clearTimeout(timer);
                children.delete(child);
                done();
              });
              child.kill('SIGTERM');
            }),
        });
      }
    });
    child.once('exit', (code) => {
      children.delete(child);
      reject(new Error(`${app} exited with ${code}`));
    });
  });
}

const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
function call(base, method, path, body, headers = {}) {
  return new Promise((resolvePromise, reject) => {
    const payload = body ? JSON.stringify(body) : undefined;
    const req = http.request(
      `${base}${path}`,
      {
        method,
        agent,
        headers: payload
          ? { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }
          : headers,
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const json = JSON.parse(Buffer.concat(chunks).toString() || 'null');
          if (res.statusCode >= 300)
            reject(new Error(`${method} ${path}: ${res.statusCode} ${JSON.stringify(json)}`));
          else resolvePromise(json);
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** The statements of this database that took PostgreSQL the most time since the last reset. */
async function printStatements(sql, limit) {
  const { rows } = await sql.query(
    `SELECT calls, total_exec_time AS total, rows, shared_blks_hit + shared_blks_read AS blocks,
            regexp_replace(left(query, 200), '\\s+', ' ', 'g') AS query
     FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
     ORDER BY total_exec_time DESC LIMIT $1`,
    [limit],
  );
  console.log('statements by PostgreSQL time (ms total, calls, ms a call, rows a call, blocks a call):');
  for (const r of rows)
    console.log(
      `${fmt(r.total).padStart(8)} ${String(r.calls).padStart(6)} ${fmt(r.total / r.calls, 2).padStart(8)} ${fmt(r.rows / r.calls, 1).padStart(7)} ${fmt(r.blocks / r.calls).padStart(7)}  ${r.query}`,
    );
}

const fmt = (n, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');
const sim = await startServer(resolve(root, 'bench/servers/network-sim.mjs'), {});
serverPids.add(sim.pid);
const simUrl = `http://127.0.0.1:${sim.port}`;
const results = [];

for (const scenario of SCENARIOS) {
  const { posts: POSTS, accounts: ACCOUNTS, publishers: PUBLISHERS } = scenario;
  const label = `${POSTS} posts / ${ACCOUNTS} accounts / ${PUBLISHERS} publisher${PUBLISHERS > 1 ? 's' : ''}`;
  console.log(`\n== ${label}`);
  await call(simUrl, 'POST', '/__sim/reset');
  const url = await freshDatabase('sps_bench_burst');
  const db = createDb(url, { poolMax: 4 });
  const tenants = [];
  for (let a = 0; a < ACCOUNTS; a += 1) {
    const account = await createAccountRepository(db).createAccount({
      name: `burst ${a}`,
      ownerEmail: `burst${a}@example.com`,
      plan: 'pro',
    });
    const key = generateApiKey();
    await createAccountRepository(db).createApiKey(account.id, key);
    // Children run without ENCRYPTION_KEY, so they use the development key this token is sealed with.
    await createSocialAccountRepository(db).connect({
      accountId: account.id,
      platform: 'twitter',
      accountName: `burst${a}`,
      externalId: null,
      instanceUrl: null,
      credentialsEncrypted: secretBox.sealV1(
        JSON.stringify({ token: `burst-token-${a}` }),
        secretBox.developmentKey('local'),
      ),
    });
    tenants.push({ accountId: account.id, key: key.key });
  }
  await db.$disconnect();

  const prefix = `sps-bench-burst-${randomBytes(3).toString('hex')}`;
  const env = {
    ...process.env,
    DATABASE_URL: appsDatabaseUrl(url),
    REDIS_URL,
    QUEUE_PREFIX: prefix,
    LOG_LEVEL: 'info',
    // Throughput of the burst, not the API's per-key limits while the bench creates the posts.
    RATE_LIMITS: 'off',
    METRICS_PORT: '0',
    NETWORK_TWITTER_BASE_URL: `${simUrl}/twitter`,
  };
  delete env.ENCRYPTION_KEY;
  const api = await startServer(resolve(root, 'bench/servers/api.mjs'), env);
  serverPids.add(api.pid);
  const apiUrl = `http://127.0.0.1:${api.port}`;
  const publishers = [];
  for (let p = 0; p < PUBLISHERS; p += 1)
    publishers.push(await startApp('publisher', 'publisher started', env));
  const webhooks = await startApp('webhooks', 'webhooks started', env);
  const processes = [
    ['simulator', sim.pid],
    ['api', api.pid],
    ...publishers.map((p, i) => [`publisher ${i + 1}`, p.pid]),
    ['webhooks', webhooks.pid],
    ...(pgbouncerPid() ? [['pgbouncer', pgbouncerPid()]] : []),
  ];
  const monitor = new pg.Client({ connectionString: url });
  await monitor.connect();
  /** CPU and peak RSS of each process, plus the PostgreSQL backends serving this database (summed). */
  const snapshot = async () => {
    const stats = Object.fromEntries(processes.map(([name, pid]) => [name, procStats(pid)]));
    const { rows } = await monitor.query(
      'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
    );
    stats.backends = Object.fromEntries(rows.map((r) => [r.pid, procStats(r.pid)?.cpu ?? 0]));
    return stats;
  };
  /** CPU seconds the backends spent between two snapshots (a backend that appeared in between counts from 0). */
  const backendCpu = (a, b) =>
    Object.entries(b.backends).reduce((sum, [pid, cpu]) => sum + cpu - (a.backends[pid] ?? 0), 0);

  const tag = randomBytes(3).toString('hex');
  const due = Math.ceil((Date.now() + leadMs(POSTS)) / 1000) * 1000;
  const dueIso = new Date(due).toISOString();
  const before = await snapshot();
  const createStarted = Date.now();
  await pool(POSTS, CONNECTIONS, async (i) => {
    const tenant = tenants[i % ACCOUNTS];
    await call(
      apiUrl,
      'POST',
      '/v1/posts',
      {
        content: `Burst ${tag} ${i} https://example.com/${i}`,
        platforms: ['twitter'],
        scheduled_for: dueIso,
      },
      { authorization: `Bearer ${tenant.key}` },
    );
  });
  const created = Date.now();
  const afterCreate = await snapshot();
  console.log(
    `created ${POSTS} scheduled posts in ${fmt((created - createStarted) / 1000, 1)} s; due ${fmt((due - created) / 1000, 1)} s later`,
  );
  if (created > due)
    console.warn('warning: the posts were not all created before they came due; raise BENCH_BURST_LEAD');

  // Until every post is final (published or failed).
  const sql = new pg.Client({ connectionString: url });
  await sql.connect();
  if (ANALYZE) {
    const started = Date.now();
    await sql.query('ANALYZE');
    console.log(`ANALYZE took ${fmt((Date.now() - started) / 1000, 1)} s`);
  }
  if (STATEMENTS > 0) {
    await sql.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await sql.query('SELECT pg_stat_statements_reset()');
  }
  let atDue = null;
  const dueTimer = setTimeout(
    async () => {
      atDue = await snapshot();
    },
    Math.max(0, due - Date.now()),
  );
  const deadline = due + 600_000;
  let final;
  for (;;) {
    // Every post of this fresh database is the scenario's: no list of ids to send and parse on each poll
    // (with 10,000 ids the poll was 5 % of PostgreSQL's time in the burst, and its CPU was counted there).
    const { rows } = await sql.query(
      `SELECT count(*) FILTER (WHERE status IN ('published', 'failed'))::int AS final,
              count(*) FILTER (WHERE status = 'published')::int AS published
       FROM posts`,
    );
    final = rows[0];
    if (final.final === POSTS) break;
    if (Date.now() > deadline) {
      console.error(`only ${final.final}/${POSTS} posts final 10 minutes after the due time`);
      break;
    }
    await sleep(Date.now() < due ? 500 : 100);
  }
  const burstEnded = Date.now();
  clearTimeout(dueTimer);
  const afterBurst = await snapshot();
  atDue ??= afterCreate;
  if (STATEMENTS > 0) await printStatements(sql, STATEMENTS);
  await monitor.end();
  await sql.end();

  // What the network received: each post's marker, when.
  const { posts: received } = await call(simUrl, 'GET', '/__sim/posts?platform=twitter');
  const seen = new Map();
  const marker = new RegExp(`^Burst ${tag} (\\d+) `);
  for (const post of received) {
    const m = marker.exec(post.text);
    if (!m) continue;
    const i = Number(m[1]);
    const entry = seen.get(i) ?? [];
    entry.push(Date.parse(post.at));
    seen.set(i, entry);
  }
  const lateness = [];
  let twice = 0;
  for (const [, times] of seen) {
    if (times.length > 1) twice += 1;
    lateness.push(Math.min(...times) - due);
  }
  const missing = POSTS - seen.size;
  lateness.sort((a, b) => a - b);
  const row = {
    label,
    posts: POSTS,
    p50: percentile(lateness, 0.5),
    p90: percentile(lateness, 0.9),
    p99: percentile(lateness, 0.99),
    max: lateness.at(-1),
    first: lateness[0],
    missing,
    twice,
    published: final.published,
  };
  results.push(row);
  console.log(
    `lateness ms (network receipt - due): p50 ${fmt(row.p50)}, p90 ${fmt(row.p90)}, p99 ${fmt(row.p99)}, max ${fmt(row.max)}, first ${fmt(row.first)}`,
  );
  console.log(
    `exactly once: ${seen.size}/${POSTS} received, ${missing} missing, ${twice} received more than once; ${final.published}/${POSTS} published in PostgreSQL`,
  );
  console.log(
    `CPU seconds while the posts were created, until the due second (prepare), and from then until the last was final (${fmt((burstEnded - due) / 1000, 1)} s):`,
  );
  console.log(
    'process'.padEnd(26),
    'create'.padStart(8),
    'prepare'.padStart(8),
    'burst'.padStart(8),
    'peak RSS MiB'.padStart(13),
  );
  const cpu = (a, b) => (a && b ? b.cpu - a.cpu : Number.NaN);
  for (const [name] of processes) {
    console.log(
      name.padEnd(26),
      fmt(cpu(before[name], afterCreate[name]), 2).padStart(8),
      fmt(cpu(afterCreate[name], atDue[name]), 2).padStart(8),
      fmt(cpu(atDue[name], afterBurst[name]), 2).padStart(8),
      fmt(afterBurst[name]?.peakRssMiB ?? Number.NaN).padStart(13),
    );
  }
  console.log(
    'postgres (this database)'.padEnd(26),
    fmt(backendCpu(before, afterCreate), 2).padStart(8),
    fmt(backendCpu(afterCreate, atDue), 2).padStart(8),
    fmt(backendCpu(atDue, afterBurst), 2).padStart(8),
  );
  await Promise.all([...publishers.map((p) => p.stop()), webhooks.stop(), api.stop()]);
  serverPids.delete(api.pid);
  const redis = new Redis(REDIS_URL);
  const keys = await redis.keys(`*${prefix}*`);
  for (let i = 0; i < keys.length; i += 1000) await redis.del(...keys.slice(i, i + 1000));
  await redis.quit();
}

console.log('\nBurst summary (lateness from the due second to the network receiving the post, ms)');
console.log(
  'scenario'.padEnd(42),
  'p50'.padStart(7),
  'p90'.padStart(7),
  'p99'.padStart(7),
  'max'.padStart(7),
  'missing'.padStart(8),
  'twice'.padStart(6),
);
for (const r of results) {
  console.log(
    r.label.padEnd(42),
    fmt(r.p50).padStart(7),
    fmt(r.p90).padStart(7),
    fmt(r.p99).padStart(7),
    fmt(r.max).padStart(7),
    String(r.missing).padStart(8),
    String(r.twice).padStart(6),
  );
}
await sim.stop();
serverPids.delete(sim.pid);
agent.destroy();
const broken = results.some((r) => r.missing > 0 || r.twice > 0 || r.published !== r.posts);
if (broken) console.error('some posts were not published exactly once: see above');
process.exit(broken ? 1 : 0);
