// Noisy neighbours (`npm run bench:neighbours`, after `npm run build`): do slow networks and busy tenants
// delay everyone else? Two runs against the real API, publisher and webhooks processes and one simulator
// process, each on a fresh database and queue prefix:
//   alone:      BENCH_NEIGHBOURS_NOW X posts published now, and BENCH_NEIGHBOURS_DUE X posts scheduled
//               for the same second;
//   neighbours: the same, while BENCH_NEIGHBOURS_VIDEOS Instagram and Threads video posts (half each)
//               were requested just before, their containers kept IN_PROGRESS by the simulator for
//               BENCH_NEIGHBOURS_WAIT (default 2m) after they are made; with BENCH_NEIGHBOURS_SLOW (e.g.
//               10s) both networks also answer every call that late (a slow network holding its calls).
// The publisher's env passes through: PUBLISH_NETWORK_SHARE=1 PUBLISH_ACCOUNT_CONCURRENCY=0 turns the
// fair lanes off for a before/after.
// Figures: X publish-now latency (publish request -> the simulator storing the post), X due lateness (due
// second -> stored), each video's time from its publish request to being stored; exactly once for all.
// Targets (issue 24): publish-now p99 < 2 s, due p99 < 1.5 s, every video out within about 3 minutes
// of its request. The runs print side by side with the load average (other work on the box skews them).
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { generateApiKey, parseDuration, secretBox } from '@sps/core';
import { createAccountRepository, createDb, createSocialAccountRepository } from '@sps/db';
import { Redis } from 'ioredis';
import pg from 'pg';
import { call, closeAgent, serverPids, startApp } from './apps.mjs';
import { freshDatabase, percentile, pool, root, startServer } from './lib.mjs';

const VIDEOS = Number(process.env.BENCH_NEIGHBOURS_VIDEOS ?? 200);
const NOW = Number(process.env.BENCH_NEIGHBOURS_NOW ?? 50);
const DUE = Number(process.env.BENCH_NEIGHBOURS_DUE ?? 1000);
const WAIT_MS = parseDuration(process.env.BENCH_NEIGHBOURS_WAIT ?? '2m');
const X_ACCOUNTS = Number(process.env.BENCH_NEIGHBOURS_X_ACCOUNTS ?? 20);
const VIDEO_ACCOUNTS = Number(process.env.BENCH_NEIGHBOURS_VIDEO_ACCOUNTS ?? 10);
/** Gives up on a run this long after its due second (what is out by then is reported). */
const TIMEOUT_MS = parseDuration(process.env.BENCH_NEIGHBOURS_TIMEOUT ?? '12m');
const RUNS = (process.env.BENCH_NEIGHBOURS_RUNS ?? 'alone,neighbours').split(',');
/** Optional: Instagram and Threads also answer every call this late (a slow network, not a processing wait). */
const SLOW_MS = process.env.BENCH_NEIGHBOURS_SLOW ? parseDuration(process.env.BENCH_NEIGHBOURS_SLOW) : 0;
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
// Long enough that every due post exists, and the videos are requested, before the due second.
const LEAD_MS = process.env.BENCH_NEIGHBOURS_LEAD
  ? parseDuration(process.env.BENCH_NEIGHBOURS_LEAD)
  : 40_000 + DUE * 9 + VIDEOS * 30;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const fmt = (n, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

const sim = await startServer(resolve(root, 'bench/servers/network-sim.mjs'), {});
serverPids.add(sim.pid);
const simUrl = `http://127.0.0.1:${sim.port}`;

/** Tenants with one connected account per network in `platforms`, sealed with the development key. */
async function tenants(db, n, platforms, label) {
  const out = [];
  for (let a = 0; a < n; a += 1) {
    const accounts = createAccountRepository(db);
    const account = await accounts.createAccount({
      name: `${label} ${a}`,
      ownerEmail: `${label}${a}@example.com`,
      plan: 'pro',
    });
    const key = generateApiKey();
    await accounts.createApiKey(account.id, key);
    for (const platform of platforms) {
      await createSocialAccountRepository(db).connect({
        accountId: account.id,
        platform,
        accountName: `${label}-${platform}-${a}`,
        externalId: platform === 'twitter' ? null : `${label}-${platform}-${a}`,
        instanceUrl: null,
        credentialsEncrypted: secretBox.sealV1(
          JSON.stringify({ token: `${label}-${platform}-${a}` }),
          secretBox.developmentKey('local'),
        ),
      });
    }
    out.push({ key: key.key });
  }
  return out;
}

/** Per marker index: every time the simulator stored a post whose text matches `marker` (ms). */
async function arrivals(platform, marker) {
  const { posts } = await call(simUrl, 'GET', `/__sim/posts?platform=${platform}`);
  const seen = new Map();
  for (const post of posts) {
    const m = marker.exec(post.text);
    if (!m) continue;
    const list = seen.get(Number(m[1])) ?? [];
    list.push(Date.parse(post.at));
    seen.set(Number(m[1]), list);
  }
  return seen;
}

/** Latencies of `n` posts from their start times (a number or a per-post array); missing and doubles. */
function latencies(seen, n, startOf) {
  const values = [];
  let twice = 0;
  for (const [i, times] of seen) {
    if (times.length > 1) twice += 1;
    values.push(Math.min(...times) - startOf(i));
  }
  values.sort((a, b) => a - b);
  return {
    n: values.length,
    missing: n - seen.size,
    twice,
    p50: percentile(values, 0.5),
    p99: percentile(values, 0.99),
    max: values.at(-1),
  };
}

async function runOnce(withNeighbours) {
  const label = withNeighbours ? 'neighbours' : 'alone';
  console.log(`\n== ${label}: load average ${load()}`);
  await call(simUrl, 'POST', '/__sim/reset');
  await call(simUrl, 'PUT', '/__sim/processing/instagram', { ms: WAIT_MS });
  await call(simUrl, 'PUT', '/__sim/processing/threads', { ms: WAIT_MS });
  for (const platform of SLOW_MS > 0 ? ['instagram', 'threads'] : [])
    await call(simUrl, 'POST', '/__sim/faults', { platform, kind: 'slow', delayMs: SLOW_MS, remaining: -1 });
  const url = await freshDatabase('sps_bench_neighbours');
  const db = createDb(url, { poolMax: 4 });
  const xTenants = await tenants(db, X_ACCOUNTS, ['twitter'], 'x');
  const videoTenants = withNeighbours ? await tenants(db, VIDEO_ACCOUNTS, ['instagram', 'threads'], 'v') : [];
  await db.$disconnect();

  const prefix = `sps-bench-neighbours-${randomBytes(3).toString('hex')}`;
  const env = {
    ...process.env,
    DATABASE_URL: url,
    REDIS_URL,
    QUEUE_PREFIX: prefix,
    LOG_LEVEL: 'info',
    RATE_LIMITS: 'off',
    METRICS_PORT: '0',
    NETWORK_TWITTER_BASE_URL: `${simUrl}/twitter`,
    NETWORK_INSTAGRAM_BASE_URL: `${simUrl}/instagram`,
    NETWORK_THREADS_BASE_URL: `${simUrl}/threads`,
  };
  delete env.ENCRYPTION_KEY;
  const api = await startServer(resolve(root, 'bench/servers/api.mjs'), env);
  serverPids.add(api.pid);
  const apiUrl = `http://127.0.0.1:${api.port}`;
  const publisher = await startApp('publisher', 'publisher started', env);
  const webhooks = await startApp('webhooks', 'webhooks started', env);
  const auth = (tenant) => ({ authorization: `Bearer ${tenant.key}` });

  const tag = randomBytes(3).toString('hex');
  const due = Math.ceil((Date.now() + LEAD_MS) / 1000) * 1000;
  const ids = [];
  await pool(DUE, 50, async (i) => {
    const tenant = xTenants[i % X_ACCOUNTS];
    const body = {
      content: `Due ${tag} ${i}`,
      platforms: ['twitter'],
      scheduled_for: new Date(due).toISOString(),
    };
    ids.push((await call(apiUrl, 'POST', '/v1/posts', body, auth(tenant))).id);
  });

  // The neighbours: video posts, half to Instagram, half to Threads, publish requested now.
  const videoStart = new Array(VIDEOS);
  if (withNeighbours) {
    const videos = new Array(VIDEOS);
    await pool(VIDEOS, 50, async (i) => {
      const tenant = videoTenants[i % VIDEO_ACCOUNTS];
      const body = {
        content: `Video ${tag} ${i}`,
        platforms: [i % 2 === 0 ? 'instagram' : 'threads'],
        media: { video: { url: `https://cdn.example.com/neighbours/${tag}-${i}.mp4` } },
      };
      videos[i] = { id: (await call(apiUrl, 'POST', '/v1/posts', body, auth(tenant))).id, tenant };
    });
    await pool(VIDEOS, 50, async (i) => {
      videoStart[i] = Date.now();
      await call(apiUrl, 'POST', `/v1/posts/${videos[i].id}/publish`, undefined, auth(videos[i].tenant));
    });
    ids.push(...videos.map((v) => v.id));
    // The videos are in their slots (or their waits) before the X posts come.
    await sleep(3_000);
  }

  const nowPosts = new Array(NOW);
  await pool(NOW, 50, async (i) => {
    const tenant = xTenants[i % X_ACCOUNTS];
    const body = { content: `Now ${tag} ${i}`, platforms: ['twitter'] };
    nowPosts[i] = { id: (await call(apiUrl, 'POST', '/v1/posts', body, auth(tenant))).id, tenant };
  });
  const nowStart = new Array(NOW);
  await pool(NOW, 50, async (i) => {
    nowStart[i] = Date.now();
    await call(apiUrl, 'POST', `/v1/posts/${nowPosts[i].id}/publish`, undefined, auth(nowPosts[i].tenant));
  });
  ids.push(...nowPosts.map((p) => p.id));
  if (Date.now() > due) console.warn('warning: the due second passed before the posts were all requested');

  const sql = new pg.Client({ connectionString: url });
  await sql.connect();
  let final;
  for (;;) {
    const { rows } = await sql.query(
      `SELECT count(*) FILTER (WHERE status IN ('published', 'failed'))::int AS final,
              count(*) FILTER (WHERE status = 'published')::int AS published
       FROM posts WHERE id = ANY($1::uuid[])`,
      [ids],
    );
    final = rows[0];
    if (final.final === ids.length) break;
    if (Date.now() > due + TIMEOUT_MS) {
      console.error(
        `only ${final.final}/${ids.length} posts final ${fmt(TIMEOUT_MS / 60_000, 1)} min after the due time`,
      );
      break;
    }
    await sleep(500);
  }
  await sql.end();
  const loadAfter = load();

  const nowLat = latencies(
    await arrivals('twitter', new RegExp(`^Now ${tag} (\\d+)$`)),
    NOW,
    (i) => nowStart[i],
  );
  const dueLat = latencies(await arrivals('twitter', new RegExp(`^Due ${tag} (\\d+)$`)), DUE, () => due);
  const videoSeen = new Map();
  for (const platform of ['instagram', 'threads'])
    for (const [i, times] of await arrivals(platform, new RegExp(`^Video ${tag} (\\d+)$`)))
      videoSeen.set(i, times);
  const videoLat = withNeighbours ? latencies(videoSeen, VIDEOS, (i) => videoStart[i]) : null;

  await Promise.all([publisher.stop(), webhooks.stop(), api.stop()]);
  serverPids.delete(api.pid);
  const redis = new Redis(REDIS_URL);
  const keys = await redis.keys(`*${prefix}*`);
  for (let i = 0; i < keys.length; i += 1000) await redis.del(...keys.slice(i, i + 1000));
  await redis.quit();
  return { label, nowLat, dueLat, videoLat, published: final.published, total: ids.length, loadAfter };
}

console.log(
  `neighbours bench: ${NOW} X now, ${DUE} X due over ${X_ACCOUNTS} accounts; ${VIDEOS} videos over ${VIDEO_ACCOUNTS} accounts, processing ${fmt(WAIT_MS / 1000)} s, calls slowed ${fmt(SLOW_MS / 1000)} s; lanes: share ${process.env.PUBLISH_NETWORK_SHARE ?? 'default'}, account cap ${process.env.PUBLISH_ACCOUNT_CONCURRENCY ?? 'default'}`,
);
const results = [];
for (const run of RUNS) results.push(await runOnce(run === 'neighbours'));

const cell = (l, key) => (l ? fmt(l[key] / 1000, 2) : '-');
console.log(
  '\nNeighbours summary (seconds; now: publish request -> stored, due: due second -> stored, video: request -> stored)',
);
console.log(
  'run'.padEnd(11),
  'now p50'.padStart(8),
  'now p99'.padStart(8),
  'due p50'.padStart(8),
  'due p99'.padStart(8),
  'videos out'.padStart(11),
  'video p50'.padStart(10),
  'video max'.padStart(10),
  'missing'.padStart(8),
  'twice'.padStart(6),
  'published'.padStart(10),
  'load after'.padStart(16),
);
for (const r of results) {
  const lat = [r.nowLat, r.dueLat, r.videoLat].filter(Boolean);
  console.log(
    r.label.padEnd(11),
    cell(r.nowLat, 'p50').padStart(8),
    cell(r.nowLat, 'p99').padStart(8),
    cell(r.dueLat, 'p50').padStart(8),
    cell(r.dueLat, 'p99').padStart(8),
    (r.videoLat ? `${r.videoLat.n}/${VIDEOS}` : '-').padStart(11),
    cell(r.videoLat, 'p50').padStart(10),
    cell(r.videoLat, 'max').padStart(10),
    String(lat.reduce((s, l) => s + l.missing, 0)).padStart(8),
    String(lat.reduce((s, l) => s + l.twice, 0)).padStart(6),
    `${r.published}/${r.total}`.padStart(10),
    r.loadAfter.padStart(16),
  );
}
await sim.stop();
serverPids.delete(sim.pid);
closeAgent();
const broken = results.some(
  (r) =>
    r.published !== r.total ||
    [r.nowLat, r.dueLat, r.videoLat].some((l) => l && (l.missing > 0 || l.twice > 0)),
);
if (broken) console.error('some posts were not published exactly once: see above');
process.exit(broken ? 1 : 0);
