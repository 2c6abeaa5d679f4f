// How long one admin CLI call takes from start to exit, as an operator's script sees it: N sequential calls of
// `key create`, `account set-plan`, `social connect` and `--help`, each a fresh `node apps/admin/dist/main.js`
// (the process start is most of the cost), then the same through `npm run -s admin --` (npm's own start adds
// its share). `npm run bench:admin` after `npm run build`; BENCH_CALLS sets N (default 20), BENCH_NPM=0 skips
// the npm rows, BENCH_HELP=0 the --help row.
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { freshDatabase, root } from './lib.mjs';

const calls = Number(process.env.BENCH_CALLS ?? 20);
const url = await freshDatabase('sps_bench_admin');
const env = { ...process.env, DATABASE_URL: url, QUEUE_PREFIX: 'sps-bench-admin' };
const cli = resolve(root, 'apps/admin/dist/main.js');

function call(viaNpm, args) {
  const started = process.hrtime.bigint();
  const out = viaNpm
    ? spawnSync('npm', ['run', '-s', 'admin', '--', ...args], { cwd: root, env, encoding: 'utf8' })
    : spawnSync(process.execPath, [cli, ...args], { cwd: root, env, encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (out.status !== 0) throw new Error(`admin ${args.join(' ')} failed: ${out.stderr}`);
  return { ms, stdout: out.stdout };
}

const created = JSON.parse(
  call(false, ['account', 'create', '--name', 'bench', '--email', 'bench@example.com', '--plan', 'free'])
    .stdout,
);
const account = created.accountId;
const commands = {
  'key create': () => ['key', 'create', '--account', account],
  'account set-plan': (i) => ['account', 'set-plan', '--account', account, '--plan', i % 2 ? 'pro' : 'free'],
  'social connect': (i) => [
    ...['social', 'connect', '--account', account, '--platform', 'telegram'],
    ...['--name', `channel-${i}`, '--token', '123456:bench-token', '--external-id', `-100${i}`],
  ],
  '--help': () => ['--help'],
};
// BENCH_HELP=0 leaves --help out (builds from before it existed answer it with an error).
if (process.env.BENCH_HELP === '0') delete commands['--help'];

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];
const rows = [];
for (const viaNpm of process.env.BENCH_NPM === '0' ? [false] : [false, true]) {
  for (const [name, args] of Object.entries(commands)) {
    const times = [];
    for (let i = 0; i < calls; i += 1) times.push(call(viaNpm, args(i)).ms);
    times.sort((a, b) => a - b);
    rows.push({
      call: `${viaNpm ? 'npm run -s admin --' : 'node apps/admin/dist/main.js'} ${name}`,
      calls,
      'median ms': Math.round(pct(times, 50)),
      'p90 ms': Math.round(pct(times, 90)),
      'min ms': Math.round(times[0]),
    });
  }
}
const idle = [];
for (let i = 0; i < calls; i += 1) {
  const started = process.hrtime.bigint();
  spawnSync(process.execPath, ['-e', '0']);
  idle.push(Number(process.hrtime.bigint() - started) / 1e6);
}
idle.sort((a, b) => a - b);
rows.push({ call: 'node -e 0 (the floor)', calls, 'median ms': Math.round(pct(idle, 50)) });
console.table(rows);
