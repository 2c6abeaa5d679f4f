// Shared bench plumbing: a migrated database of its own, servers in child processes, autocannon runs.
import { execFileSync, fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { generateApiKey } from '@sps/core';
import { createAccountRepository } from '@sps/db';
import autocannon from 'autocannon';
import pg from 'pg';

export const root = resolve(import.meta.dirname, '..');

export function benchDatabaseUrl(name) {
  const url = new URL(process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres');
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * The URL the service's processes use for database `name`: through PgBouncer (transaction pooling, the
 * service's `pgbouncer=true` mode) when `BENCH_PGBOUNCER_URL` names one (`.ci/pgbouncer` prints it), else
 * `url` itself. The bench's own set-up and monitoring stay on the direct URL.
 */
export function appsDatabaseUrl(url) {
  const base = process.env.BENCH_PGBOUNCER_URL;
  if (!base) return url;
  const through = new URL(base);
  through.pathname = new URL(url).pathname;
  through.searchParams.set('pgbouncer', 'true');
  return through.toString();
}

/** The pid of the PgBouncer in front of the apps (`BENCH_PGBOUNCER_URL`), to count its CPU; else null. */
export function pgbouncerPid() {
  if (!process.env.BENCH_PGBOUNCER_URL) return null;
  const dir = process.env.PGBOUNCER_DIR ?? `${process.env.TMPDIR ?? '/tmp'}/sps-pgbouncer`;
  try {
    return Number(readFileSync(`${dir}/pgbouncer.pid`, 'utf8').trim()) || null;
  } catch {
    return null;
  }
}

/** A freshly migrated database `name` of the bench's own (dropped first if a run left one); its URL. */
export async function freshDatabase(name) {
  const admin = new pg.Client({ connectionString: benchDatabaseUrl('postgres') });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
  const url = benchDatabaseUrl(name);
  migrate(url);
  return url;
}

/** The bench's account (plan pro) and an API key for it. */
export async function benchAccount(db) {
  const accounts = createAccountRepository(db);
  const account = await accounts.createAccount({
    name: 'bench',
    ownerEmail: 'bench@example.com',
    plan: 'pro',
  });
  const key = generateApiKey();
  await accounts.createApiKey(account.id, key);
  return { account, key };
}

export function migrate(url) {
  execFileSync(process.execPath, [resolve(root, 'apps/admin/dist/migrate.js'), 'deploy'], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: url, INIT_CWD: root },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** Starts `script` as a child process that sends `{port}` once it listens; `stop()` resolves when it exited. */
export function startServer(script, env) {
  return new Promise((resolvePromise, reject) => {
    const child = fork(script, [], {
      env: { ...process.env, ...env },
      // e.g. BENCH_SERVER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" to profile the server under load
      execArgv: (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean),
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    child.once('message', (message) =>
      resolvePromise({
        port: message.port,
        pid: child.pid,
        // Resolves once the process is gone: a server still draining would steal CPU from the next one.
        stop: () =>
          new Promise((done) => {
            if (child.exitCode !== null || child.signalCode !== null) return done();
            child.once('exit', () => done());
            child.kill('SIGTERM');
          }),
      }),
    );
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
}

const CLOCK_TICKS = 100; // USER_HZ on Linux

/**
 * A process's CPU seconds (user + system) so far and its peak resident set (VmHWM, MiB) from /proc; null
 * once it is gone.
 */
export function procStats(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which sits in parentheses and may contain spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const cpu = (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const hwm = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? Number.NaN) / 1024;
    return { cpu, peakRssMiB: hwm };
  } catch {
    return null;
  }
}

export async function run({
  url,
  method = 'GET',
  headers = {},
  body,
  connections = 50,
  duration = 10,
  warmup = 3,
}) {
  const options = {
    url,
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body,
    connections,
  };
  await autocannon({ ...options, duration: warmup });
  const result = await autocannon({ ...options, duration });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p90: result.latency.p90,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    total: result.requests.total,
  };
}

export function report(title, rows, ratio) {
  console.log(`\n${title}`);
  console.log(
    'name'.padEnd(34),
    'req/s'.padStart(9),
    'p50 ms'.padStart(8),
    'p90 ms'.padStart(8),
    'p99 ms'.padStart(8),
    'non2xx'.padStart(7),
  );
  for (const [name, r] of rows) {
    console.log(
      name.padEnd(34),
      r.rps.toFixed(0).padStart(9),
      String(r.p50).padStart(8),
      String(r.p90).padStart(8),
      String(r.p99).padStart(8),
      String(r.non2xx + r.errors).padStart(7),
    );
  }
  for (const [label, value] of ratio) console.log(`${label}: ${value.toFixed(2)}x`);
}

/** Runs `task(i)` for i in [0, n) with `width` in flight. */
export async function pool(n, width, task) {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, n) }, async () => {
      while (next < n) {
        const i = next;
        next += 1;
        await task(i);
      }
    }),
  );
}

export function percentile(sorted, q) {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}
