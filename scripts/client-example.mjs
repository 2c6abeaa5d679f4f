// CI (after the build): pack packages/client with `npm pack`, check what the tarball holds, install it into a new
// project outside the repository, compile that project's example (examples/client, outside packages/: it is a consumer
// program and reads its settings from the environment) with strict tsc
// against the tarball's types, and run it against the real API, publisher and network simulator started from
// this repository's dist/ (as `npm start -- --demo` runs them) on a database and queue prefix of its own.
//
//   node scripts/client-example.mjs          needs PostgreSQL, Redis and `npm run build` first
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const clientDir = join(root, 'packages/client');
const run = promisify(execFile);
const started = Date.now();

function log(message) {
  process.stdout.write(`client-example (${((Date.now() - started) / 1000).toFixed(1)} s): ${message}\n`);
}

async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const installedVersion = async (name) =>
  JSON.parse(await readFile(join(root, 'node_modules', name, 'package.json'), 'utf8')).version;

/** What a published package may contain: compiled JS, declarations, the README and package.json. */
const ALLOWED = /^(dist\/.+\.(js|d\.ts)|README\.md|package\.json)$/;

async function pack(work) {
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', work], {
    cwd: clientDir,
    maxBuffer: 10_000_000,
  });
  // `prepack` (the build) may print before npm's JSON: read from the JSON's opening bracket.
  const [info] = JSON.parse(stdout.slice(stdout.indexOf('[\n')));
  const paths = info.files.map((f) => f.path);
  const stray = paths.filter((p) => !ALLOWED.test(p));
  if (stray.length > 0) throw new Error(`the tarball holds files it should not: ${stray.join(', ')}`);
  for (const needed of ['dist/index.js', 'dist/index.d.ts', 'README.md']) {
    if (!paths.includes(needed)) throw new Error(`the tarball lacks ${needed}`);
  }
  const manifest = JSON.parse(await readFile(join(clientDir, 'package.json'), 'utf8'));
  if (manifest.private || manifest.dependencies) {
    throw new Error('the client must be publishable (not private) and have no runtime dependencies');
  }
  log(`packed ${info.filename}: ${paths.length} files, ${info.size} bytes`);
  return join(work, info.filename);
}

async function makeProject(work, tarball) {
  const dir = join(work, 'example');
  await cp(join(root, 'examples/client'), dir, {
    recursive: true,
    filter: (src) => !src.includes('node_modules'),
  });
  await writeFile(
    join(dir, 'package.json'),
    `${JSON.stringify(
      {
        name: 'social-posts-client-example',
        private: true,
        type: 'module',
        dependencies: { '@social-posts/client': `file:${tarball}` },
        devDependencies: {
          typescript: await installedVersion('typescript'),
          '@types/node': await installedVersion('@types/node'),
        },
      },
      null,
      2,
    )}\n`,
  );
  // The same versions this repository installed come from npm's cache; the client itself has no dependency.
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: dir,
  });
  log('installed the tarball into a new project');
  await run(process.execPath, [join(dir, 'node_modules/typescript/bin/tsc'), '-p', dir]);
  log('compiled the example with strict tsc against the packed types');
  return dir;
}

/** The API, publisher and simulator from dist/, on a new database and queue prefix; `stop()` ends them all. */
async function startService() {
  const tag = randomBytes(4).toString('hex');
  const base = process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/social_posts';
  const databaseUrl = new URL(base);
  databaseUrl.pathname = `/sps_client_example_${tag}`;
  process.env.SIM_PORT = String(await freePort());
  const { demoEnv, waitForHttp } = await import('./demo.mjs');
  const port = await freePort();
  const env = {
    ...process.env,
    ...demoEnv(),
    DATABASE_URL: databaseUrl.toString(),
    QUEUE_PREFIX: `sps-client-example-${tag}`,
    PORT: String(port),
    LOG_LEVEL: 'warn',
  };
  await run(process.execPath, ['apps/admin/dist/migrate.js', 'deploy'], { cwd: root, env });
  const output = [];
  const children = [
    'apps/network-sim/dist/main.js',
    'apps/api/dist/main.js',
    'apps/publisher/dist/main.js',
  ].map((entry) => {
    const child = spawn(process.execPath, [entry], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (d) => output.push(`${entry}: ${d}`));
    child.stderr.on('data', (d) => output.push(`${entry}: ${d}`));
    return child;
  });
  const stop = async () => {
    await Promise.all(
      children.map(
        (child) =>
          new Promise((resolve) => {
            if (child.exitCode !== null) return resolve();
            child.once('exit', resolve);
            child.kill('SIGTERM');
            setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
          }),
      ),
    );
    const { default: pg } = await import('pg');
    // The maintenance database: the one DATABASE_URL names may not exist on a CI machine.
    const maintenance = new URL(base);
    maintenance.pathname = '/postgres';
    const admin = new pg.Client({ connectionString: maintenance.toString() });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "sps_client_example_${tag}" WITH (FORCE)`);
    await admin.end();
    const { Redis } = await import('ioredis');
    const redis = new Redis(env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    const keys = await redis.keys(`${env.QUEUE_PREFIX}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  };
  try {
    const apiUrl = `http://127.0.0.1:${port}`;
    // Generous: a loaded machine takes a while to start three Node processes and the migrations.
    await waitForHttp(`${apiUrl}/readyz`, 90_000);
    const admin = async (args) =>
      JSON.parse(
        (await run(process.execPath, ['apps/admin/dist/main.js', ...args], { cwd: root, env })).stdout,
      );
    // Plan `pro`: Variant A needs an active plan to create and publish.
    const { accountId, apiKey } = await admin([
      'account',
      'create',
      '--name',
      'Client example',
      '--email',
      `client-${tag}@example.test`,
      '--plan',
      'pro',
    ]);
    await admin([
      'social',
      'connect',
      '--account',
      accountId,
      '--platform',
      'twitter',
      '--name',
      'ex_twitter',
      '--token',
      'tok-twitter',
    ]);
    await admin([
      'social',
      'connect',
      '--account',
      accountId,
      '--platform',
      'mastodon',
      '--name',
      'ex_mastodon',
      '--token',
      'tok-mastodon',
      '--instance',
      `http://127.0.0.1:${env.SIM_PORT}/mastodon`,
    ]);
    log(`service up on ${apiUrl} (simulated networks on port ${env.SIM_PORT})`);
    return { apiUrl, apiKey, stop, output };
  } catch (error) {
    process.stderr.write(output.join(''));
    await stop();
    throw error;
  }
}

const work = await mkdtemp(join(tmpdir(), 'sps-client-example-'));
// The service starts while the package is packed, installed and compiled.
const serviceStarting = startService();
serviceStarting.catch(() => undefined); // awaited below; not an unhandled rejection meanwhile
try {
  const project = await pack(work).then((tarball) => makeProject(work, tarball));
  const service = await serviceStarting;
  const { stdout, stderr } = await run(process.execPath, [join(project, 'dist/main.js')], {
    cwd: project,
    env: { ...process.env, SPS_BASE_URL: service.apiUrl, SPS_API_KEY: service.apiKey },
    timeout: 60_000,
  }).catch((error) => {
    process.stderr.write(`${error.stdout ?? ''}${error.stderr ?? ''}${service.output.join('')}`);
    throw new Error(`the example failed: ${error.message}`);
  });
  process.stdout.write(stdout);
  if (stderr) process.stderr.write(stderr);
  if (!stdout.includes('"ok":true')) throw new Error('the example did not report ok');
  log('the example ran against the packed client: ok');
} finally {
  // Stopped whatever happened, also when packing failed while the service was still starting.
  const service = await serviceStarting.catch(() => undefined);
  await service?.stop();
  await rm(work, { recursive: true, force: true });
}
