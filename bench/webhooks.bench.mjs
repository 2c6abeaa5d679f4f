// Webhook deliveries per second (outbox → dispatcher → BullMQ → signed HTTPS POST → receiver), next to a
// plain got POST loop to the same receiver with the same concurrency, in the same run, and their ratio.
// `npm run bench:webhooks` (after `npm run build`). BENCH_EVENTS (default 3000), BENCH_CONCURRENCY (50).
import { execFileSync, fork } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, createServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { secretBox } from '@sps/core';
import { createAccountRepository, createDb } from '@sps/db';
import { createQueues, createRedisFactory } from '@sps/queue';
import got from 'got';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { freshDatabase, root } from './lib.mjs';

if (process.argv[2] === '--receiver') {
  // Child: an HTTPS receiver that counts requests and answers 204.
  const [certPath, keyPath] = process.argv.slice(3);
  let count = 0;
  const server = createServer({ cert: readFileSync(certPath), key: readFileSync(keyPath) }, (req, res) => {
    req.resume();
    req.on('end', () => {
      count += 1;
      res.writeHead(204).end();
    });
  });
  process.on('message', (m) => m === 'count' && process.send({ count }));
  server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
} else {
  await main();
}

async function main() {
  const events = Number(process.env.BENCH_EVENTS ?? 3000);
  const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 50);
  const dir = mkdtempSync(join(tmpdir(), 'sps-bench-webhooks-'));
  const certPath = join(dir, 'cert.pem');
  const keyPath = join(dir, 'key.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
      '-keyout',
      keyPath,
      '-out',
      certPath,
    ],
    { stdio: 'ignore' },
  );
  const ca = readFileSync(certPath);

  const receiver = fork(import.meta.filename, ['--receiver', certPath, keyPath], { stdio: 'inherit' });
  const port = await new Promise((r) => receiver.once('message', (m) => r(m.port)));
  const count = () =>
    new Promise((r) => {
      receiver.once('message', (m) => r(m.count));
      receiver.send('count');
    });
  const url = `https://127.0.0.1:${port}/hook`;
  const body = JSON.stringify({
    id: '00000000-0000-4000-8000-000000000000',
    type: 'post.published',
    created_at: new Date().toISOString(),
    data: { post: { id: 'x', content: 'y'.repeat(300) } },
  });

  // 1. Baseline: a plain got POST loop, same concurrency, same keep-alive, same CA.
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const client = got.extend({
    https: { certificateAuthority: ca },
    agent: { https: agent },
    retry: { limit: 0 },
  });
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < events) {
        next += 1;
        await client.post(url, { body, headers: { 'content-type': 'application/json' } });
      }
    }),
  );
  const baseline = events / ((performance.now() - t0) / 1000);
  agent.destroy();

  // 2. The service: events in the outbox, the webhooks worker in this process.
  const dbUrl = await freshDatabase('sps_bench_webhooks');
  const db = createDb(dbUrl, { poolMax: 10 });
  const key = secretBox.developmentKey('bench');
  const account = await createAccountRepository(db).createAccount({
    name: 'bench',
    ownerEmail: 'bench@example.com',
    plan: 'pro',
  });
  await db.webhook.create({
    data: {
      accountId: account.id,
      url,
      events: ['post.published'],
      secretEncrypted: secretBox.sealV1(`whsec_${Buffer.alloc(32, 7).toString('base64')}`, key),
    },
  });
  await db.event.createMany({
    data: Array.from({ length: events }, () => ({
      accountId: account.id,
      type: 'post.published',
      data: { post: { id: 'x', content: 'y'.repeat(300) } },
    })),
  });

  const prefix = `sps-bench-webhooks-${process.pid}`;
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const connection = createRedisFactory({ url: redisUrl }).worker();
  const queues = createQueues(connection, prefix);
  const { createWebhooksWorker } = await import(resolve(root, 'apps/webhooks/dist/webhooks.js'));
  const { createMailer } = await import(resolve(root, 'apps/webhooks/dist/mailer.js'));
  const logger = pino({ level: 'silent' });
  const before = await count();
  const t1 = performance.now();
  const worker = await createWebhooksWorker({
    db,
    connection,
    queues,
    queuePrefix: prefix,
    logger,
    mailer: createMailer({ from: 'bench@localhost', logger }),
    options: {
      encryptionKey: key,
      retryDelaysMs: [60_000],
      timeoutMs: 30_000,
      allowPrivateUrls: true,
      deactivateAfter: 10,
      concurrency,
      certificateAuthority: ca,
    },
    dispatchEveryMs: 50,
    reconcileEveryMs: 60_000,
  });
  while ((await count()) - before < events) await new Promise((r) => setTimeout(r, 20));
  const service = events / ((performance.now() - t1) / 1000);
  const succeeded = await db.webhookDelivery.count({ where: { status: 'succeeded' } });

  await worker.close();
  await queues.close();
  const redis = new Redis(redisUrl);
  const keys = await redis.keys(`*${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
  await connection.quit();
  await db.$disconnect();
  receiver.kill();
  rmSync(dir, { recursive: true, force: true });

  const ratio = service / baseline;
  console.log(
    JSON.stringify(
      {
        events,
        concurrency,
        receiver: 'https 127.0.0.1 (self-signed)',
        plainGotPerSec: Math.round(baseline),
        webhookDeliveriesPerSec: Math.round(service),
        ratio: Number(ratio.toFixed(2)),
        target: 0.5,
        succeededRows: succeeded,
      },
      null,
      2,
    ),
  );
  process.exit(ratio >= 0.5 ? 0 : 1);
}
