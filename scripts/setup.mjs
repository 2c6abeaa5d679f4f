// The set-up `npm start` and `npm test` run first, so a fresh clone needs no other command: install what is
// missing (with the same lockfile fallback as .ci/run), generate the Prisma client, make sure PostgreSQL and
// Redis answer (start them, or install them with apt as .ci/run does, or say exactly what to do), build, and
// for `start` apply the migrations. Every step is skipped when it has nothing to do, so a second run is quick.
// Node built-ins only: this runs before any dependency is installed.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const mode = process.argv[2] === 'start' ? 'start' : 'test';
const quiet = process.env.SETUP_QUIET === 'true';

function say(message) {
  if (!quiet) process.stderr.write(`setup: ${message}\n`);
}

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', ...options });
  return result.status === 0;
}

function has(command) {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

function mtime(path) {
  try {
    return statSync(join(root, path)).mtimeMs;
  } catch {
    return 0;
  }
}

// npm rewrites node_modules/.package-lock.json on every install: older than a manifest means stale.
function installNeeded() {
  const installed = mtime('node_modules/.package-lock.json');
  if (installed === 0) return true;
  const manifests = ['package.json', 'package-lock.json'];
  for (const group of ['apps', 'packages', 'tools']) {
    if (!existsSync(join(root, group))) continue;
    for (const name of readdirSync(join(root, group))) manifests.push(join(group, name, 'package.json'));
  }
  return manifests.some((m) => mtime(m) > installed);
}

function install() {
  if (!installNeeded()) return;
  say('installing dependencies (npm ci)');
  if (run('npm', ['ci', '--no-audit', '--no-fund'])) return;
  // As in .ci/run: a registry mirror without other platforms' optional binaries can make `npm ci` refuse
  // the lockfile; `npm install` installs the same locked versions and skips what this platform does not need.
  say('npm ci refused the lockfile; installing the locked versions with npm install');
  if (!run('npm', ['install', '--no-audit', '--no-fund'])) throw new Error('npm install failed');
}

function generate() {
  const client = 'packages/db/src/generated/prisma/client.ts';
  if (mtime(client) > mtime('prisma/schema.prisma')) return;
  say('generating the Prisma client');
  const out = spawnSync('npm', ['run', '-s', 'generate'], { cwd: root, encoding: 'utf8' });
  const text = `${out.stdout}${out.stderr}`;
  // `prisma generate` can exit 0 without generating (see notes/prisma-offline.md): trust its words.
  if (out.status !== 0 || !text.includes('Generated Prisma Client')) {
    process.stderr.write(text);
    throw new Error('prisma generate did not generate the client');
  }
}

const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;

function aptInstall(pkg) {
  if (!asRoot || !has('apt-get')) return false;
  say(`installing ${pkg} with apt-get`);
  return run('sh', [
    '-c',
    `apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ${pkg}`,
  ]);
}

function waitFor(check, seconds) {
  for (let i = 0; i < seconds; i += 1) {
    if (check()) return true;
    execFileSync('sleep', ['1']);
  }
  return check();
}

function local(host) {
  return ['127.0.0.1', 'localhost', '::1', '[::1]'].includes(host);
}

function postgres() {
  // The direct connection when there is one (DATABASE_URL may point at PgBouncer, which this does not start).
  const url = new URL(
    process.env.DIRECT_DATABASE_URL ||
      process.env.DATABASE_URL ||
      'postgresql://postgres@127.0.0.1:5432/social_posts',
  );
  const host = url.hostname || '127.0.0.1';
  const port = url.port || '5432';
  const ready = () =>
    has('pg_isready') && run('pg_isready', ['-q', '-h', host, '-p', port], { stdio: 'ignore' });
  if (ready()) return;
  const explain = `PostgreSQL does not answer at ${host}:${port}. Start it (or set DATABASE_URL), e.g. on Debian: apt-get install postgresql && pg_ctlcluster --skip-systemctl-redirect <version> main start`;
  if (!local(host)) throw new Error(explain);
  if (!has('pg_ctlcluster') && !aptInstall('postgresql')) throw new Error(explain);
  const versions = existsSync('/etc/postgresql') ? readdirSync('/etc/postgresql').sort((a, b) => a - b) : [];
  const version = versions.at(-1);
  if (!version) throw new Error(explain);
  say(`starting PostgreSQL ${version}`);
  run('pg_ctlcluster', ['--skip-systemctl-redirect', version, 'main', 'start']);
  if (!waitFor(ready, 30)) throw new Error(explain);
}

function redis() {
  // A Redis Cluster (REDIS_CLUSTER_NODES) is the operator's to run; tests always need the local Redis too.
  if (mode === 'start' && process.env.REDIS_CLUSTER_NODES) return;
  const url = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  const host = url.hostname || '127.0.0.1';
  const port = url.port || '6379';
  const ready = () => {
    if (!has('redis-cli')) return false;
    const out = spawnSync('redis-cli', ['-h', host, '-p', port, 'ping'], { encoding: 'utf8' });
    return out.stdout?.includes('PONG') ?? false;
  };
  if (ready()) return;
  const explain = `Redis does not answer at ${host}:${port}. Start it (or set REDIS_URL), e.g. on Debian: apt-get install redis-server && redis-server --daemonize yes --bind 127.0.0.1 --port ${port}`;
  if (!local(host)) throw new Error(explain);
  if (!has('redis-server') && !aptInstall('redis-server')) throw new Error(explain);
  say('starting Redis');
  run('redis-server', [
    '--daemonize',
    'yes',
    '--bind',
    '127.0.0.1',
    '--port',
    port,
    '--save',
    '',
    '--appendonly',
    'no',
  ]);
  if (!waitFor(ready, 30)) throw new Error(explain);
}

// The dashboard's browser tests drive Debian's Chromium (playwright-core downloads no browser).
function chromium() {
  const path = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
  if (existsSync(path) || aptInstall('chromium')) return;
  say(
    `no Chromium at ${path}: the dashboard's browser tests will fail (apt-get install chromium, or set CHROMIUM_PATH)`,
  );
}

try {
  install();
  generate();
  postgres();
  redis();
  if (mode === 'test') chromium();
  say('building');
  if (!run('npm', ['run', '-s', 'build'])) throw new Error('the build failed');
  if (mode === 'start') {
    say('applying migrations');
    if (!run('npm', ['run', '-s', 'db:migrate'])) throw new Error('the migrations failed');
  }
} catch (error) {
  process.stderr.write(`setup: ${error.message}\n`);
  process.exit(1);
}
