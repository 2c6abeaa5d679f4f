// Publishing throughput and schedule lateness, in one run on one Redis (`npm run bench:publish`, after
// `npm run build`):
//   (a) raw BullMQ: a Queue and a Worker (concurrency 50) doing nothing, jobs/s;
//   (b) end to end: POST /v1/posts/{id}/publish on the real API process, the real publisher process,
//       one network (twitter) on the simulator answering at once; posts/s from the first publish
//       request to the last post final; and the ratio to (a) (target >= 0.15x, and >= 0.9x of the floor (b2));
//   (b2) the floor: the same posts through a bare pipeline (one UPDATE + add behind HTTP, one POST + UPDATE
//       in a worker) on the same box, to show what the hardware allows before the service's guarantees;
//   (c) schedule lateness: posts due over one window, each post's lateness = when the simulator received
//       it minus its due time; p50/p90/p99/max (target p99 < 1 s). `npm run bench:burst` measures posts
//       all due in the same second.
// Both (b) and (b2) run BENCH_WARMUP_POSTS (200) first, not counted, so neither pays JIT and connection
// set-up in its figures. The bench runs its own Redis (a `redis-server` on a free port, so its CPU per post
// is counted and other users of the box's Redis do not show in it); BENCH_SHARED_REDIS=1 uses REDIS_URL.
// Scale with BENCH_RAW_JOBS, BENCH_POSTS, BENCH_WARMUP_POSTS, BENCH_SCHEDULE_POSTS, BENCH_SCHEDULE_WINDOW (e.g. 10s),
// BENCH_SCHEDULE_LEAD, BENCH_HTTP_CONNECTIONS, PUBLISH_CONCURRENCY, BENCH_FLOOR_CONCURRENCY (the floor worker's, 50),
// BENCH_PUBLISHER_DB_POOL.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { parseDuration, secretBox } from '@sps/core';
import { createDb, createSocialAccountRepository } from '@sps/db';
import { bullPrefix, JOBS } from '@sps/queue';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';
import { benchAccount, freshDatabase, percentile, pool, procStats, root, startServer } from './lib.mjs';

const int = (name, fallback) => Number(process.env[name] ?? fallback);
const duration = (name, fallback) => {
  const raw = process.env[name] ?? fallback;
  return /^\d+$/.test(raw) ? Number(raw) * 1000 : parseDuration(raw);
};
const RAW_JOBS = int('BENCH_RAW_JOBS', 20_000);
const POSTS = int('BENCH_POSTS', 2_000);
const WARMUP_POSTS = int('BENCH_WARMUP_POSTS', 200);
const SCHEDULE_POSTS = int('BENCH_SCHEDULE_POSTS', 1_000);
const SCHEDULE_WINDOW = duration('BENCH_SCHEDULE_WINDOW', '60s');
const SCHEDULE_LEAD = duration('BENCH_SCHEDULE_LEAD', '10s');
const CONNECTIONS = int('BENCH_HTTP_CONNECTIONS', 50);
const CONCURRENCY = int('PUBLISH_CONCURRENCY', 50);
const PUBLISHER_DB_POOL = int('BENCH_PUBLISHER_DB_POOL', 10);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const children = [];

/** A free TCP port on 127.0.0.1 (closed again before it is returned). */
function freePort() {
  return new Promise((resolvePromise, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolvePromise(port));
    });
  });
}

/** A `redis-server` of the bench's own (no persistence); its URL and pid. */
async function ownRedis() {
  const port = await freePort();
  const child = spawn(
    'redis-server',
    ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  // Stopped last (after the processes that use it); killed with the bench whatever happens.
  process.on('exit', () => child.kill('SIGKILL'));
  const url = `redis://127.0.0.1:${port}`;
  for (let tries = 0; ; tries += 1) {
    const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    // Refused until the server listens: connect() rejects, and without a listener ioredis prints the event.
    probe.on('error', () => undefined);
    try {
      await probe.connect();
      await probe.ping();
      probe.disconnect();
      return { url, pid: child.pid, child };
    } catch (error) {
      probe.disconnect();
      if (tries > 50) throw error;
      await sleep(100);
    }
  }
}

const sharedRedis = process.env.BENCH_SHARED_REDIS === '1';
const redisServer = sharedRedis ? null : await ownRedis();
const REDIS_URL = redisServer?.url ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `sps-bench-publish-${randomBytes(3).toString('hex')}`;

/** The publisher as the service runs it (`node apps/publisher/dist/main.js`); resolves once it started. */
function startPublisher(env) {
  return new Promise((resolvePromise, reject) => {
    // BENCH_PUBLISHER_NODE_ARGS, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`, to profile the publisher.
    const nodeArgs = (process.env.BENCH_PUBLISHER_NODE_ARGS ?? '').split(' ').filter(Boolean);
    const child = spawn(process.execPath, [...nodeArgs, resolve(root, 'apps/publisher/dist/main.js')], {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.push(child);
    let buffered = '';
    child.stdout.on('data', (chunk) => {
      if (buffered === null) return;
      buffered += chunk.toString();
      if (buffered.includes('"publisher started"')) {
        buffered = null;
        resolvePromise(child);
      }
    });
    child.once('exit', (code) => reject(new Error(`publisher exited with ${code}`)));
  });
}

async function stopAll() {
  await Promise.all(
    children.map(
      (child) =>
        new Promise((done) => {
          if (child.exitCode !== null || child.signalCode !== null) return done();
          const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
          child.once('exit', () => {
            clearTimeout(timer);
            done();
          });
          child.kill('SIGTERM');
        }),
    ),
  );
}

// ---- database, account, API key, connected twitter account ------------------------------------
const url = await freshDatabase('sps_bench_publish');
const db = createDb(url, { poolMax: 2 });
const { account, key } = await benchAccount(db);
// Child processes run without ENCRYPTION_KEY, so they use the development key this token is sealed with.
await createSocialAccountRepository(db).connect({
  accountId: account.id,
  platform: 'twitter',
  accountName: 'bench',
  externalId: null,
  instanceUrl: null,
  credentialsEncrypted: secretBox.sealV1(
    JSON.stringify({ token: 'bench-token' }),
    secretBox.developmentKey('local'),
  ),
});
await db.$disconnect();

const sql = new pg.Client({ connectionString: url });
await sql.connect();
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });

// Throughput, not the API's per-key limits (bench:limits measures those).
const childEnv = {
  ...process.env,
  DATABASE_URL: url,
  REDIS_URL,
  QUEUE_PREFIX: PREFIX,
  LOG_LEVEL: 'silent',
  RATE_LIMITS: 'off',
};
delete childEnv.ENCRYPTION_KEY;
// Children never outlive the bench, whatever happens.
const stops = [];
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
  for (const stop of stops) stop();
});
// A bench stopped by a signal exits through the handler above too (no orphaned servers).
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(1));
const simServer = await startServer(resolve(root, 'bench/servers/network-sim.mjs'), childEnv);
stops.push(simServer.stop);
const simUrl = `http://127.0.0.1:${simServer.port}`;
const api = await startServer(resolve(root, 'bench/servers/api.mjs'), childEnv);
stops.push(api.stop);
const apiUrl = `http://127.0.0.1:${api.port}`;
const headers = { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' };

// node:http with keep-alive rather than fetch: the load generator shares the two cores with everything
// it measures, and fetch costs it several times the CPU per request.
const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
function call(method, path, body, base = apiUrl) {
  return new Promise((resolvePromise, reject) => {
    const payload = body ? JSON.stringify(body) : undefined;
    const req = http.request(
      `${base}${path}`,
      {
        method,
        agent,
        headers: payload ? { ...headers, 'content-length': Buffer.byteLength(payload) } : headers,
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

// ---- (a) raw BullMQ no-op throughput -------------------------------------------------------------
async function rawBullmq(n) {
  const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const prefix = bullPrefix(`${PREFIX}-raw`);
  const queue = new Queue('noop', { connection, prefix });
  let completed = 0;
  let finished;
  const allDone = new Promise((r) => {
    finished = r;
  });
  const worker = new Worker('noop', async () => undefined, { connection, prefix, concurrency: 50 });
  worker.on('completed', () => {
    completed += 1;
    if (completed === n) finished();
  });
  await worker.waitUntilReady();
  // Same shape as the publish path: one add per job from concurrent producers (the API's requests),
  // with the publish job's options, while the worker drains.
  const started = performance.now();
  await pool(n, CONNECTIONS, (i) =>
    queue.add('noop', { i }, { jobId: `noop-${i}`, removeOnComplete: JOBS.publish.options.removeOnComplete }),
  );
  await allDone;
  const seconds = (performance.now() - started) / 1000;
  await worker.close();
  await queue.close();
  await connection.quit();
  return { count: n, seconds, perSecond: n / seconds };
}

const raw = await rawBullmq(RAW_JOBS);

// ---- (b) end-to-end publish throughput -----------------------------------------------------------
const publisherChild = await startPublisher({
  ...childEnv,
  LOG_LEVEL: 'info',
  PUBLISH_CONCURRENCY: String(CONCURRENCY),
  DB_POOL_MAX: String(PUBLISHER_DB_POOL),
  NETWORK_TWITTER_BASE_URL: `${simUrl}/twitter`,
  NETWORK_TIMEOUT: '10s',
});

async function waitFinal(ids, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await sql.query(
      `SELECT count(*) FILTER (WHERE status IN ('published', 'failed'))::int AS final,
              count(*) FILTER (WHERE status = 'failed')::int AS failed,
              max(updated_at) AS last
       FROM posts WHERE id = ANY($1::uuid[])`,
      [ids],
    );
    const row = rows[0];
    if (row.final === ids.length) return { failed: row.failed, last: row.last.getTime() };
    if (Date.now() > deadline)
      throw new Error(`only ${row.final}/${ids.length} posts final after ${timeoutMs} ms`);
    await sleep(50);
  }
}

/** `count` twitter drafts created through the API; their ids in order. */
async function createDrafts(label, count = POSTS) {
  const ids = new Array(count);
  await pool(count, CONNECTIONS, async (i) => {
    ids[i] = (
      await call('POST', '/v1/posts', {
        content: `${label} ${i} https://example.com/${i}`,
        platforms: ['twitter'],
      })
    ).id;
  });
  return ids;
}

const drafts = await createDrafts('Bench post');
const warmDrafts = await createDrafts('Warm-up post', WARMUP_POSTS);
/** CPU seconds so far of each process, and of this database's PostgreSQL backends (summed). */
async function cpuNow(processes) {
  const { rows } = await sql.query(
    'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
  );
  return {
    ...Object.fromEntries(processes.map(([name, pid]) => [name, procStats(pid)?.cpu ?? 0])),
    redis: redisServer ? (procStats(redisServer.pid)?.cpu ?? 0) : Number.NaN,
    backends: Object.fromEntries(rows.map((r) => [r.pid, procStats(r.pid)?.cpu ?? 0])),
  };
}
/** CPU ms per post between two snapshots, per process and in all (a backend that appeared counts from 0). */
function cpuPerPost(a, b, processes, posts) {
  const perProcess = processes.map(([name]) => [name, ((b[name] - a[name]) * 1000) / posts]);
  const backends = Object.entries(b.backends).reduce(
    (sum, [pid, cpu]) => sum + cpu - (a.backends[pid] ?? 0),
    0,
  );
  perProcess.push(['postgres', (backends * 1000) / posts]);
  // Only the bench's own Redis is counted (NaN on a shared one).
  perProcess.push(['redis', ((b.redis - a.redis) * 1000) / posts]);
  return [...perProcess, ['all', perProcess.reduce((sum, [, ms]) => sum + ms, 0)]];
}
const serviceProcesses = [
  ['api', api.pid],
  ['publisher', publisherChild.pid],
  ['simulator', simServer.pid],
];
// Warm-up, not counted: JIT, pools and sockets of every process on the path.
await pool(WARMUP_POSTS, CONNECTIONS, (i) => call('POST', `/v1/posts/${warmDrafts[i]}/publish`));
await waitFinal(warmDrafts, 300_000);
// Statistics, as autovacuum gathers them within a minute on a running deployment: the database is fresh and
// the run lasts seconds, so without this every statement would be planned for empty tables, and a plan cached
// then (a seq scan that grows with the table) kept for the whole run (docs/performance.md, round nine).
// BENCH_PUBLISH_ANALYZE=0 measures that never-analyzed database.
const ANALYZE = process.env.BENCH_PUBLISH_ANALYZE !== '0';
if (ANALYZE) await sql.query('ANALYZE');
const e2eCpuBefore = await cpuNow(serviceProcesses);
const publishStarted = Date.now();
await pool(POSTS, CONNECTIONS, (i) => call('POST', `/v1/posts/${drafts[i]}/publish`));
const requestsDone = Date.now();
const e2eFinal = await waitFinal(drafts, 300_000);
const e2eCpu = cpuPerPost(e2eCpuBefore, await cpuNow(serviceProcesses), serviceProcesses, POSTS);
const e2eSeconds = (e2eFinal.last - publishStarted) / 1000;
const e2e = { count: POSTS, seconds: e2eSeconds, perSecond: POSTS / e2eSeconds };

// ---- (b2) the floor: a bare pipeline on the same box -----------------------------------------------
// An HTTP endpoint doing one UPDATE and one BullMQ add, a worker doing one POST to the simulator and one
// UPDATE (bench/servers/bare-publish-*.mjs): what this hardware allows for "request -> job -> network ->
// final" before any of the service's guarantees. The service's own processes sit idle meanwhile.
const bareDrafts = await createDrafts('Bare post');
const bareWarmDrafts = await createDrafts('Bare warm-up post', WARMUP_POSTS);
// A simulator of its own, empty like the first one was for (b): X's duplicate-content rule reads the
// account's timeline, so a simulator already holding (b)'s posts costs more per post and flattered the ratio.
const bareSim = await startServer(resolve(root, 'bench/servers/network-sim.mjs'), childEnv);
stops.push(bareSim.stop);
const bareEnv = { ...childEnv, NETWORK_TWITTER_BASE_URL: `http://127.0.0.1:${bareSim.port}/twitter` };
const bareWorker = await startServer(resolve(root, 'bench/servers/bare-publish-worker.mjs'), bareEnv);
const bareApi = await startServer(resolve(root, 'bench/servers/bare-publish-api.mjs'), bareEnv);
stops.push(bareWorker.stop, bareApi.stop);
const bareUrl = `http://127.0.0.1:${bareApi.port}`;
const floorProcesses = [
  ['api', bareApi.pid],
  ['publisher', bareWorker.pid],
  ['simulator', bareSim.pid],
];
await pool(WARMUP_POSTS, CONNECTIONS, (i) =>
  call('POST', `/publish/${bareWarmDrafts[i]}`, undefined, bareUrl),
);
await waitFinal(bareWarmDrafts, 300_000);
if (ANALYZE) await sql.query('ANALYZE');
const floorCpuBefore = await cpuNow(floorProcesses);
const bareStarted = Date.now();
await pool(POSTS, CONNECTIONS, (i) => call('POST', `/publish/${bareDrafts[i]}`, undefined, bareUrl));
const bareFinal = await waitFinal(bareDrafts, 300_000);
const floorCpu = cpuPerPost(floorCpuBefore, await cpuNow(floorProcesses), floorProcesses, POSTS);
const bareSeconds = (bareFinal.last - bareStarted) / 1000;
const floor = { count: POSTS, seconds: bareSeconds, perSecond: POSTS / bareSeconds };
await bareApi.stop();
await bareWorker.stop();
await bareSim.stop();

// ---- (c) schedule lateness -------------------------------------------------------------------------
const firstDue = Date.now() + SCHEDULE_LEAD;
const dueOf = (i) => new Date(firstDue + Math.floor((i * SCHEDULE_WINDOW) / SCHEDULE_POSTS));
const scheduled = new Array(SCHEDULE_POSTS);
const scheduleTag = randomBytes(3).toString('hex');
// In due order, so each post exists well before its time.
await pool(SCHEDULE_POSTS, CONNECTIONS, async (i) => {
  scheduled[i] = (
    await call('POST', '/v1/posts', {
      content: `Scheduled bench post ${scheduleTag} ${i}`,
      platforms: ['twitter'],
      scheduled_for: dueOf(i).toISOString(),
    })
  ).id;
});
const createdAllBy = Date.now();
if (createdAllBy > firstDue) {
  console.warn(
    `warning: scheduling took ${createdAllBy - firstDue + SCHEDULE_LEAD} ms, longer than the lead; raise BENCH_SCHEDULE_LEAD`,
  );
}
const scheduleFinal = await waitFinal(scheduled, SCHEDULE_LEAD + SCHEDULE_WINDOW + 120_000);

// Lateness as the network saw it: when the simulator received each post, minus its due time.
const received = await new Promise((resolvePromise, reject) => {
  http
    .get(`${simUrl}/__sim/posts?platform=twitter`, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolvePromise(JSON.parse(Buffer.concat(chunks).toString()).posts));
      res.on('error', reject);
    })
    .on('error', reject);
});
const marker = new RegExp(`^Scheduled bench post ${scheduleTag} (\\d+)$`);
const receivedLate = [];
const seenScheduled = new Set();
for (const post of received) {
  const m = marker.exec(post.text);
  if (!m) continue;
  seenScheduled.add(Number(m[1]));
  receivedLate.push(Date.parse(post.at) - dueOf(Number(m[1])).getTime());
}
const missing = SCHEDULE_POSTS - seenScheduled.size;
const { rows: publishedRows } = await sql.query(
  `SELECT extract(epoch FROM (published_at - scheduled_for)) * 1000 AS late FROM posts WHERE id = ANY($1::uuid[]) AND published_at IS NOT NULL`,
  [scheduled],
);
const publishedLate = publishedRows.map((r) => Number(r.late));

// ---- report ----------------------------------------------------------------------------------------
const fmt = (n, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');
console.log(
  `\nPublish throughput: one network (twitter), simulator answering at once, publisher PUBLISH_CONCURRENCY=${CONCURRENCY}, ${CONNECTIONS} HTTP connections`,
);
console.log('name'.padEnd(52), 'count'.padStart(7), 'seconds'.padStart(9), 'per s'.padStart(9));
for (const [name, r] of [
  ['raw BullMQ no-op jobs (add + process, concurrency 50)', raw],
  ['end-to-end publish (first request -> all final)', e2e],
  ['floor: bare UPDATE+add -> POST+UPDATE pipeline', floor],
]) {
  console.log(
    name.padEnd(52),
    String(r.count).padStart(7),
    fmt(r.seconds, 2).padStart(9),
    fmt(r.perSecond).padStart(9),
  );
}
const sumOf = (cpu, names) => cpu.filter(([n]) => names.includes(n)).reduce((s, [, ms]) => s + ms, 0);
const pipelineNames = ['publisher', 'postgres', 'redis'];
console.log(
  `CPU ms per post, publisher + PostgreSQL + Redis: ${fmt(sumOf(e2eCpu, pipelineNames), 2)} against the floor's ${fmt(sumOf(floorCpu, pipelineNames), 2)} (${fmt(sumOf(e2eCpu, pipelineNames) / sumOf(floorCpu, pipelineNames), 2)}x, target <= 1.3x)`,
);
console.log(
  `publish requests answered in ${fmt((requestsDone - publishStarted) / 1000, 2)} s; ${e2eFinal.failed} posts failed`,
);
console.log(`ratio (end-to-end / raw BullMQ): ${fmt(e2e.perSecond / raw.perSecond, 2)}x (target >= 0.15x)`);
console.log(
  `floor / raw BullMQ: ${fmt(floor.perSecond / raw.perSecond, 2)}x; end-to-end / floor: ${fmt(e2e.perSecond / floor.perSecond, 2)}x (target >= 0.9x)`,
);

console.log(
  `\nCPU ms per post (${WARMUP_POSTS} warm-up posts not counted${ANALYZE ? ', ANALYZE after them' : ', never analyzed'}; ${redisServer ? "the bench's own Redis" : 'shared Redis not counted'})`.padEnd(
    53,
  ),
  ...e2eCpu.map(([name]) => name.padStart(10)),
);
for (const [label, cpu] of [
  ['end-to-end publish (API = the service)', e2eCpu],
  ['floor (API = bare endpoint, publisher = bare worker)', floorCpu],
]) {
  console.log(label.padEnd(52), ...cpu.map(([, ms]) => fmt(ms, 2).padStart(10)));
}

const row = (label, values) => {
  const sorted = [...values].sort((a, b) => a - b);
  console.log(
    label.padEnd(40),
    ...[0.5, 0.9, 0.99].map((q) => fmt(percentile(sorted, q)).padStart(7)),
    fmt(sorted.at(-1)).padStart(7),
    String(sorted.length).padStart(6),
  );
};
console.log(
  `\nSchedule lateness: ${SCHEDULE_POSTS} posts due over ${SCHEDULE_WINDOW / 1000} s (ms after the due time)`,
);
console.log(
  'measure'.padEnd(40),
  'p50'.padStart(7),
  'p90'.padStart(7),
  'p99'.padStart(7),
  'max'.padStart(7),
  'posts'.padStart(6),
);
row('received by the network (simulator)', receivedLate);
row('published_at (recorded after the answer)', publishedLate);
console.log(
  `${scheduleFinal.failed} scheduled posts failed; ${missing} never reached the network; target p99 < 1000 ms`,
);

await stopAll();
await api.stop();
await simServer.stop();
stops.length = 0;
agent.destroy();
await sql.end();
if (!redisServer) {
  const keys = await redis.keys(`*${PREFIX}*`);
  for (let i = 0; i < keys.length; i += 1000) await redis.del(...keys.slice(i, i + 1000));
}
await redis.quit();
// Give the API and simulator a moment to exit on their SIGTERM.
await sleep(1_000);
redisServer?.child.kill('SIGTERM');
process.exit(0);
