// Large videos through the media library to a network (`npm run bench:media`, after `npm run build`):
//   1. a BENCH_MEDIA_MB (default 200) MB MP4 (a real ftyp/moov header the sniffers and MP4 reader accept, then
//      an mdat box of random-ish padding) is written to a temporary directory, and copied once with `cp`
//      (the baseline);
//   2. BENCH_MEDIA_COUNT (default 20) uploads of it through POST /v1/media (multipart, streamed from disk),
//      BENCH_MEDIA_UPLOADS_AT_ONCE (default 4) at a time: upload throughput against `cp`;
//   3. one X post per item, all published at once through the real API and publisher processes against the
//      simulator (X's chunked upload: INITIALIZE, APPEND segments, FINALIZE, STATUS), which hashes what it
//      assembled; every hash must equal the file's;
//   4. the publisher's peak RSS (VmHWM) before and after the publishes: the target is under 300 MB whatever
//      the file size (each video is spooled from the store to a temporary file and sent a segment at a time).
//      The children inherit the environment: `MALLOC_ARENA_MAX=2 npm run bench:media` measures that setting.
// The temporary directory (source, copy, media store) is removed at the end, on failure too.
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fakeMp4, generateApiKey, secretBox } from '@sps/core';
import { createAccountRepository, createDb, createSocialAccountRepository } from '@sps/db';
import { Redis } from 'ioredis';
import pg from 'pg';
import { serverPids, startApp } from './apps.mjs';
import { freshDatabase, pool, procStats, root, startServer } from './lib.mjs';

const COUNT = Number(process.env.BENCH_MEDIA_COUNT ?? 20);
const MB = Number(process.env.BENCH_MEDIA_MB ?? 200);
const UPLOADS_AT_ONCE = Number(process.env.BENCH_MEDIA_UPLOADS_AT_ONCE ?? 4);
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const SIZE = Math.round(MB * 1024 * 1024);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const fmt = (n, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');
const mbps = (bytes, ms) => bytes / 1024 / 1024 / (ms / 1000);

function call(base, method, path, body, headers = {}) {
  return new Promise((resolvePromise, reject) => {
    const payload = body ? JSON.stringify(body) : undefined;
    const req = http.request(
      `${base}${path}`,
      {
        method,
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
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** POST /v1/media with the file streamed from disk as one multipart part (never read whole here either). */
function uploadFile(base, key, path, size) {
  const boundary = `bench${randomBytes(8).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="clip.mp4"\r\nContent-Type: video/mp4\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return new Promise((resolvePromise, reject) => {
    const req = http.request(
      `${base}/v1/media`,
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': `multipart/form-data; boundary=${boundary}`,
          'content-length': head.length + size + tail.length,
        },
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const json = JSON.parse(Buffer.concat(chunks).toString() || 'null');
          if (res.statusCode !== 201)
            reject(new Error(`POST /v1/media: ${res.statusCode} ${JSON.stringify(json)}`));
          else resolvePromise(json);
        });
      },
    );
    req.on('error', reject);
    req.write(head);
    const file = createReadStream(path);
    file.on('error', reject);
    file.on('end', () => req.end(tail));
    file.pipe(req, { end: false });
  });
}

/** The test video: fakeMp4's header with an mdat box announcing the whole rest, then padding; its sha256. */
async function writeVideo(path, size) {
  const header = Buffer.from(fakeMp4(5, 0));
  // fakeMp4(_, 0) ends with an empty 8-byte mdat box: it is rewritten to hold the padding.
  const mdatAt = header.length - 8;
  const padding = size - header.length;
  header.writeUInt32BE(padding + 8, mdatAt);
  const hash = createHash('sha256');
  const out = createWriteStream(path);
  const write = async (chunk) => {
    hash.update(chunk);
    if (!out.write(chunk)) await once(out, 'drain');
  };
  await write(header);
  const block = randomBytes(1024 * 1024);
  for (let left = padding; left > 0; left -= block.length)
    await write(block.subarray(0, Math.min(left, block.length)));
  await new Promise((r) => out.end(r));
  return hash.digest('hex');
}

const dir = await mkdtemp(join(tmpdir(), 'sps-bench-media-'));
const cleanup = () => rm(dir, { recursive: true, force: true });
process.on('SIGINT', () => void cleanup().then(() => process.exit(130)));
try {
  console.log(execFileSync('df', ['-h', tmpdir()]).toString().trim());
  const source = join(dir, 'source.mp4');
  const expected = await writeVideo(source, SIZE);
  console.log(`\n${COUNT} videos of ${MB} MB (${SIZE} bytes), sha256 ${expected.slice(0, 16)}…`);
  // glibc's malloc arenas (one per thread by default) hold freed memory; MALLOC_ARENA_MAX=2 lowers the peak.
  console.log(
    `MALLOC_ARENA_MAX=${process.env.MALLOC_ARENA_MAX ?? '(glibc default)'} for the API and publisher`,
  );
  const cpStarted = Date.now();
  execFileSync('cp', [source, join(dir, 'copy.mp4')]);
  const cpMs = Date.now() - cpStarted;
  await rm(join(dir, 'copy.mp4'));

  const url = await freshDatabase('sps_bench_media');
  const db = createDb(url, { poolMax: 2 });
  const account = await createAccountRepository(db).createAccount({
    name: 'media bench',
    ownerEmail: 'media@example.com',
    plan: 'pro',
  });
  const apiKey = generateApiKey();
  await createAccountRepository(db).createApiKey(account.id, apiKey);
  // Children run without ENCRYPTION_KEY, so they use the development key this token is sealed with.
  await createSocialAccountRepository(db).connect({
    accountId: account.id,
    platform: 'twitter',
    accountName: 'mediabench',
    externalId: null,
    instanceUrl: null,
    credentialsEncrypted: secretBox.sealV1(
      JSON.stringify({ token: 'media-bench-token' }),
      secretBox.developmentKey('local'),
    ),
  });
  await db.$disconnect();

  const sim = await startServer(resolve(root, 'bench/servers/network-sim.mjs'), {});
  serverPids.add(sim.pid);
  const simUrl = `http://127.0.0.1:${sim.port}`;
  const prefix = `sps-bench-media-${randomBytes(3).toString('hex')}`;
  const env = {
    ...process.env,
    DATABASE_URL: url,
    REDIS_URL,
    QUEUE_PREFIX: prefix,
    LOG_LEVEL: 'info',
    RATE_LIMITS: 'off',
    METRICS_PORT: '0',
    MEDIA_STORAGE: 'fs',
    MEDIA_DIR: join(dir, 'store'),
    // Own media URLs are read from the store; nothing listens here.
    PUBLIC_URL: 'http://127.0.0.1:9',
    NETWORK_TWITTER_BASE_URL: `${simUrl}/twitter`,
    // Processing STATUS checks as X advises (check_after_secs, 1 s in the simulator).
  };
  delete env.ENCRYPTION_KEY;
  const api = await startServer(resolve(root, 'bench/servers/api.mjs'), env);
  serverPids.add(api.pid);
  const apiUrl = `http://127.0.0.1:${api.port}`;
  const publisher = await startApp('publisher', 'publisher started', env);
  const idle = procStats(publisher.pid);

  // Uploads.
  const items = new Array(COUNT);
  const uploadStarted = Date.now();
  await pool(COUNT, UPLOADS_AT_ONCE, async (i) => {
    items[i] = await uploadFile(apiUrl, apiKey.key, source, SIZE);
  });
  const uploadMs = Date.now() - uploadStarted;
  const apiAfterUploads = procStats(api.pid);

  // Publishes, all at once.
  const tag = randomBytes(3).toString('hex');
  const ids = [];
  for (let i = 0; i < COUNT; i += 1) {
    const post = await call(
      apiUrl,
      'POST',
      '/v1/posts',
      { content: `Media bench ${tag} ${i}`, platforms: ['twitter'], media: { video: { url: items[i].url } } },
      { authorization: `Bearer ${apiKey.key}` },
    );
    ids.push(post.id);
  }
  const publishStarted = Date.now();
  await Promise.all(
    ids.map((id) =>
      call(apiUrl, 'POST', `/v1/posts/${id}/publish`, undefined, { authorization: `Bearer ${apiKey.key}` }),
    ),
  );
  const sql = new pg.Client({ connectionString: url });
  await sql.connect();
  const deadline = Date.now() + 30 * 60_000;
  let final;
  for (;;) {
    const { rows } = await sql.query(
      `SELECT count(*) FILTER (WHERE status IN ('published', 'failed'))::int AS final,
              count(*) FILTER (WHERE status = 'published')::int AS published
       FROM posts WHERE id = ANY($1::uuid[])`,
      [ids],
    );
    final = rows[0];
    if (final.final === COUNT || Date.now() > deadline) break;
    await sleep(250);
  }
  const publishMs = Date.now() - publishStarted;
  await sql.end();
  const busy = procStats(publisher.pid);

  // What X assembled.
  const { posts } = await call(simUrl, 'GET', '/__sim/posts?platform=twitter');
  const mine = posts.filter((p) => p.text.startsWith(`Media bench ${tag} `));
  const matching = mine.filter((p) => p.media?.uploads?.[0]?.sha256 === expected).length;

  const storeBytes = (await stat(join(dir, 'store')).catch(() => null)) ? SIZE * COUNT : 0;
  console.log(`\ncp of one file: ${fmt(cpMs)} ms, ${fmt(mbps(SIZE, cpMs))} MB/s`);
  console.log(
    `POST /v1/media, ${COUNT} uploads ${UPLOADS_AT_ONCE} at a time: ${fmt(uploadMs / 1000, 1)} s, ${fmt(mbps(SIZE * COUNT, uploadMs))} MB/s in all (${fmt(mbps(SIZE * COUNT, uploadMs) / mbps(SIZE, cpMs), 2)}x cp); API peak RSS ${fmt(apiAfterUploads?.peakRssMiB)} MiB`,
  );
  console.log(
    `publish of ${COUNT} x ${MB} MB videos to X at once: ${fmt(publishMs / 1000, 1)} s (${fmt(mbps(storeBytes, publishMs))} MB/s sent), ${final.published}/${COUNT} published, ${matching}/${COUNT} with the file's sha256 at the simulator`,
  );
  console.log(
    `publisher peak RSS: ${fmt(idle?.peakRssMiB)} MiB idle, ${fmt(busy?.peakRssMiB)} MiB after the publishes (target < 300 MiB); CPU ${fmt((busy?.cpu ?? 0) - (idle?.cpu ?? 0), 1)} s`,
  );

  await publisher.stop();
  await api.stop();
  serverPids.delete(api.pid);
  await sim.stop();
  serverPids.delete(sim.pid);
  const redis = new Redis(REDIS_URL);
  const keys = await redis.keys(`*${prefix}*`);
  for (let i = 0; i < keys.length; i += 1000) await redis.del(...keys.slice(i, i + 1000));
  await redis.quit();
  const ok = final.published === COUNT && matching === COUNT && (busy?.peakRssMiB ?? 0) < 300;
  if (!ok) console.error('not every video was published byte for byte under 300 MiB: see above');
  process.exitCode = ok ? 0 : 1;
} finally {
  await cleanup();
}
