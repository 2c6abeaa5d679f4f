// tus uploads across two API processes (after `npm run build`): one BENCH_TUS_MB (default 200) MB MP4 sent
// by tus in BENCH_TUS_CHUNK_MB (default 8) MB PATCHes that alternate between two API instances (same
// PostgreSQL and Redis), once with MEDIA_STORAGE=fs (shared MEDIA_DIR, tus's FileStore) and once with
// MEDIA_STORAGE=s3 (the local s3rver; pieces in the bucket, state in Redis). Prints the throughput against a
// `cp` of the file, the median and slowest non-final PATCH and the final PATCH (its chunk, then staging into
// the store: a hard link on fs, part copies or a stream on S3),
// and checks the served item's sha256.
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fakeMp4, generateApiKey } from '@sps/core';
import { createAccountRepository, createDb } from '@sps/db';
import { Redis } from 'ioredis';
import { freshDatabase, root, startServer } from './lib.mjs';

const MB = 1024 * 1024;
const SIZE = Math.round(Number(process.env.BENCH_TUS_MB ?? 200) * MB);
const CHUNK = Math.round(Number(process.env.BENCH_TUS_CHUNK_MB ?? 8) * MB);
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const fmt = (n, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');
const mbps = (bytes, ms) => bytes / MB / (ms / 1000);

/** One HTTP request, the body a buffer or a file range streamed from disk; resolves to status, headers, body. */
function send(url, method, headers, body) {
  return new Promise((resolvePromise, reject) => {
    const req = http.request(url, { method, headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () =>
        resolvePromise({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }),
      );
    });
    req.on('error', reject);
    if (body?.path) {
      const file = createReadStream(body.path, { start: body.start, end: body.end - 1 });
      file.on('error', reject);
      file.pipe(req);
    } else req.end(body);
  });
}

async function writeVideo(path) {
  const header = Buffer.from(fakeMp4(5, 0));
  header.writeUInt32BE(SIZE - header.length + 8, header.length - 8);
  const hash = createHash('sha256');
  const out = createWriteStream(path);
  const write = async (chunk) => {
    hash.update(chunk);
    if (!out.write(chunk)) await once(out, 'drain');
  };
  await write(header);
  const block = randomBytes(MB);
  for (let left = SIZE - header.length; left > 0; left -= block.length)
    await write(block.subarray(0, Math.min(left, block.length)));
  await new Promise((r) => out.end(r));
  return hash.digest('hex');
}

/** The local S3 API server (scripts/s3-test-server.mjs) in a child process. */
async function startS3(dir) {
  const child = spawn(process.execPath, [resolve(root, 'scripts/s3-test-server.mjs'), '0', dir], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  for await (const chunk of child.stdout) {
    out += chunk;
    const endpoint = /^listening (\S+)/m.exec(out)?.[1];
    if (endpoint) return { endpoint, stop: () => child.kill('SIGTERM') };
  }
  throw new Error('the S3 test server did not start');
}

async function run(kind, dir, source, expected) {
  const url = await freshDatabase(`sps_bench_tus_${kind}`);
  const db = createDb(url, { poolMax: 2 });
  const accounts = createAccountRepository(db);
  const account = await accounts.createAccount({
    name: 'tus bench',
    ownerEmail: 'tus@example.com',
    plan: 'pro',
  });
  const apiKey = generateApiKey();
  await accounts.createApiKey(account.id, apiKey);
  await db.$disconnect();
  const s3 = kind === 's3' ? await startS3(await mkdtemp(join(dir, 's3-'))) : null;
  const prefix = `sps-bench-tus-${randomBytes(3).toString('hex')}`;
  const env = {
    DATABASE_URL: url,
    REDIS_URL,
    QUEUE_PREFIX: prefix,
    RATE_LIMITS: 'off',
    METRICS_PORT: '0',
    MEDIA_DIR: join(dir, `store-${kind}`),
    PUBLIC_URL: 'http://127.0.0.1:9',
    ...(s3
      ? {
          MEDIA_STORAGE: 's3',
          S3_ENDPOINT: s3.endpoint,
          S3_BUCKET: 'sps-media',
          S3_REGION: 'us-east-1',
          S3_ACCESS_KEY_ID: 'S3RVER',
          S3_SECRET_ACCESS_KEY: 'S3RVER',
          S3_FORCE_PATH_STYLE: 'true',
        }
      : { MEDIA_STORAGE: 'fs' }),
  };
  const apis = [
    await startServer(resolve(root, 'bench/servers/api.mjs'), env),
    await startServer(resolve(root, 'bench/servers/api.mjs'), env),
  ];
  const base = (i) => `http://127.0.0.1:${apis[i % 2].port}`;
  const auth = { authorization: `Bearer ${apiKey.key}`, 'tus-resumable': '1.0.0' };
  try {
    const started = Date.now();
    const created = await send(`${base(0)}/v1/media/uploads`, 'POST', { ...auth, 'upload-length': SIZE });
    if (created.status !== 201) throw new Error(`create: ${created.status} ${created.body}`);
    const path = new URL(created.headers.location).pathname;
    let slowest = 0;
    let finalMs = 0;
    const others = [];
    let mediaId;
    for (let offset = 0, i = 1; offset < SIZE; offset += CHUNK, i += 1) {
      const end = Math.min(SIZE, offset + CHUNK);
      const patchStarted = Date.now();
      const res = await send(
        `${base(i)}${path}`,
        'PATCH',
        {
          ...auth,
          'upload-offset': offset,
          'content-type': 'application/offset+octet-stream',
          'content-length': end - offset,
        },
        { path: source, start: offset, end },
      );
      if (res.status !== 204) throw new Error(`PATCH at ${offset}: ${res.status} ${res.body}`);
      const ms = Date.now() - patchStarted;
      if (end === SIZE) {
        finalMs = ms;
        mediaId = res.headers['media-id'];
      } else {
        slowest = Math.max(slowest, ms);
        others.push(ms);
      }
    }
    const totalMs = Date.now() - started;
    // The final PATCH carries a chunk too: compare it with a usual one to see what finishing costs.
    const median = others.sort((a, b) => a - b)[Math.floor(others.length / 2)] ?? 0;
    const item = JSON.parse(
      (await send(`${base(0)}/v1/media/${mediaId}`, 'GET', { authorization: auth.authorization })).body,
    );
    const served = await send(`${base(1)}${new URL(item.url).pathname}`, 'GET', {});
    const same = createHash('sha256').update(served.body).digest('hex') === expected;
    console.log(
      `${kind}: ${fmt(SIZE / MB)} MB in ${Math.ceil(SIZE / CHUNK)} PATCHes of ${fmt(CHUNK / MB)} MB over 2 instances: ${fmt(totalMs / 1000, 1)} s, ${fmt(mbps(SIZE, totalMs))} MB/s; median PATCH ${median} ms, slowest ${slowest} ms; final PATCH (its chunk + staging into the store) ${finalMs} ms; sha256 ${same ? 'matches' : 'DIFFERS'}`,
    );
    return same;
  } finally {
    for (const api of apis) await api.stop();
    s3?.stop();
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`*${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  }
}

const dir = await mkdtemp(join(tmpdir(), 'sps-bench-tus-'));
try {
  const source = join(dir, 'source.mp4');
  const expected = await writeVideo(source);
  const cpStarted = Date.now();
  await new Promise((r, j) =>
    spawn('cp', [source, join(dir, 'copy.mp4')]).on('exit', (c) => (c === 0 ? r() : j(new Error('cp')))),
  );
  const cpMs = Date.now() - cpStarted;
  await rm(join(dir, 'copy.mp4'));
  console.log(`cp of the ${fmt(SIZE / MB)} MB file: ${cpMs} ms, ${fmt(mbps(SIZE, cpMs))} MB/s`);
  const kinds = (process.env.BENCH_TUS_STORAGE ?? 'fs,s3').split(',');
  let ok = true;
  for (const kind of kinds) ok = (await run(kind, dir, source, expected)) && ok;
  process.exitCode = ok ? 0 : 1;
} finally {
  await rm(dir, { recursive: true, force: true });
}
