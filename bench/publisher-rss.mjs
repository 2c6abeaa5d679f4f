// What the idle publisher holds (`npm run bench:publisher-rss`, after `npm run build`), issue 23:
//   1. the real publisher (`node apps/publisher/dist/main.js`, env as bench/media.bench.mjs gives it) against
//      a fresh database, local Redis and no network: its VmRSS / VmHWM / RssAnon / RssFile once it logged
//      `publisher started` and after BENCH_RSS_IDLE_MS (default 5000) of idling, next to a bare `node` process
//      of the same run (the baseline);
//   2. import costs: one fresh `node --expose-gc` process per module (the module and everything it pulls in,
//      after a gc): RSS over the bare process, and the V8 heap / external memory it adds.
// Children inherit the environment: `MALLOC_ARENA_MAX=2 npm run bench:publisher-rss` measures that setting.
// Figures only, no assertion: the box is shared, note `cat /proc/loadavg` next to them.
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { serverPids, startApp } from './apps.mjs';
import { freshDatabase, root } from './lib.mjs';

const IDLE_MS = Number(process.env.BENCH_RSS_IDLE_MS ?? 5000);
const RUNS = Number(process.env.BENCH_RSS_RUNS ?? 1);
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const mib = (kb) => (kb / 1024).toFixed(1);

function status(pid) {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(text)?.[1] ?? Number.NaN);
  return {
    rss: field('VmRSS'),
    hwm: field('VmHWM'),
    anon: field('RssAnon'),
    file: field('RssFile'),
  };
}

const row = (label, s) =>
  `${label.padEnd(34)} ${mib(s.rss).padStart(7)} ${mib(s.hwm).padStart(7)} ${mib(s.anon).padStart(7)} ${mib(s.file).padStart(7)}`;
const header = `${'process (MiB)'.padEnd(34)} ${'VmRSS'.padStart(7)} ${'VmHWM'.padStart(7)} ${'Anon'.padStart(7)} ${'File'.padStart(7)}`;

// A module's cost in a fresh process: imported from apps/publisher so the workspace packages resolve as there.
const PROBE = `
const { readFileSync } = await import('node:fs');
const specs = process.argv[1] ? process.argv[1].split(',') : [];
for (const spec of specs) await import(spec);
globalThis.gc(); globalThis.gc();
const text = readFileSync('/proc/self/status', 'utf8');
const kb = (n) => Number(new RegExp(n + ':\\\\s+(\\\\d+) kB').exec(text)[1]);
const m = process.memoryUsage();
console.log(JSON.stringify({ rss: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile'), heap: m.heapUsed, external: m.external }));
`;
function probe(specs) {
  const out = execFileSync(
    process.execPath,
    ['--expose-gc', '--input-type=module', '-e', PROBE, specs.join(',')],
    { cwd: resolve(root, 'apps/publisher'), stdio: ['ignore', 'pipe', 'inherit'] },
  );
  return JSON.parse(out.toString());
}

console.log(
  `load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}; node ${process.version}`,
);
console.log(`MALLOC_ARENA_MAX=${process.env.MALLOC_ARENA_MAX ?? '(glibc default)'}\n`);

// 1. The idle publisher against a bare node process.
const url = await freshDatabase('sps_bench_publisher_rss');
const env = {
  ...process.env,
  DATABASE_URL: url,
  REDIS_URL,
  LOG_LEVEL: 'info',
  RATE_LIMITS: 'off',
  METRICS_PORT: '0',
  MEDIA_STORAGE: 'fs',
  MEDIA_DIR: resolve(root, 'node_modules/.cache/sps-bench-publisher-rss'),
  PUBLIC_URL: 'http://127.0.0.1:9',
};
delete env.ENCRYPTION_KEY;
console.log(header);
for (let run = 1; run <= RUNS; run++) {
  const bare = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  serverPids.add(bare.pid);
  env.QUEUE_PREFIX = `sps-bench-rss-${process.pid}-${run}`;
  const publisher = await startApp('publisher', 'publisher started', env);
  const started = status(publisher.pid);
  await sleep(IDLE_MS);
  console.log(row(`bare node (run ${run})`, status(bare.pid)));
  console.log(row(`publisher at 'started' (run ${run})`, started));
  console.log(row(`publisher after ${IDLE_MS} ms idle`, status(publisher.pid)));
  await publisher.stop();
  bare.kill();
}

// 2. Import costs, each in a fresh process, over a bare one.
const modules = [
  '@sps/core',
  '@sps/db',
  '@sps/queue',
  '@sps/storage',
  '@sps/ops',
  '@sps/networks',
  'sharp',
  'twitter-text',
  'got',
  '@atproto/api',
  'bullmq',
  'zod',
  'pino,pino-pretty',
  './dist/publisher.js',
];
const base = probe([]);
console.log(
  `\n${'import (MiB over bare node)'.padEnd(34)} ${'RSS'.padStart(7)} ${'Anon'.padStart(7)} ${'File'.padStart(7)} ${'heap'.padStart(7)} ${'extern'.padStart(7)}`,
);
console.log(
  `${'(bare node, absolute)'.padEnd(34)} ${mib(base.rss).padStart(7)} ${mib(base.anon).padStart(7)} ${mib(base.file).padStart(7)} ${(base.heap / 1048576).toFixed(1).padStart(7)} ${(base.external / 1048576).toFixed(1).padStart(7)}`,
);
for (const spec of modules) {
  const p = probe(spec.split(','));
  const d = (k) => mib(p[k] - base[k]).padStart(7);
  const b = (k) => ((p[k] - base[k]) / 1048576).toFixed(1).padStart(7);
  console.log(`${spec.padEnd(34)} ${d('rss')} ${d('anon')} ${d('file')} ${b('heap')} ${b('external')}`);
}
process.exit(0);
