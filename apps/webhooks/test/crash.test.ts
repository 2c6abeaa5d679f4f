import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createWebhookDeliveryRepository } from '@sps/db';
import { deleteKeysMatching } from '@sps/queue';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from '../../api/test/harness.js';
import { makeCertificate, startReceiver, type TCertificate, type TReceiver } from './support/receiver.js';

const MAIN = resolve(import.meta.dirname, '../dist/main.js');
const ENCRYPTION_KEY = randomBytes(32).toString('hex');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('webhooks worker crash and Redis loss', () => {
  let cert: TCertificate;
  let receiver: TReceiver;
  let api: TTestApi;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    cert = makeCertificate();
    receiver = await startReceiver(cert);
    api = await startTestApi({
      env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', ENCRYPTION_KEY },
      webhooks: { certificateAuthority: cert.cert, lockDurationMs: 1000 },
    });
    // The worker process under test is started per test; the in-process one only when a test asks.
    await api.stopWebhooks();
  });
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    await api.close();
    await receiver.close();
    cert.remove();
  });

  /** The real `npm run start:webhooks` entry point, trusting the receiver through NODE_EXTRA_CA_CERTS. */
  async function startChild(): Promise<ChildProcess> {
    const child = spawn(process.execPath, [MAIN], {
      env: {
        PATH: process.env.PATH ?? '',
        NODE_ENV: 'test',
        DATABASE_URL: api.env.DATABASE_URL,
        REDIS_URL: api.env.REDIS_URL,
        // The same cluster as the in-process API when `.ci/run` runs this file on one.
        REDIS_CLUSTER_NODES: process.env.REDIS_CLUSTER_NODES ?? '',
        QUEUE_PREFIX: api.env.QUEUE_PREFIX,
        ENCRYPTION_KEY,
        NODE_EXTRA_CA_CERTS: cert.certPath,
        WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
        WEBHOOK_RETRY_DELAYS: '100ms,200ms,300ms,400ms,500ms',
        WEBHOOK_DISPATCH_EVERY: '100ms',
        WEBHOOK_LOCK_DURATION: '1s',
        METRICS_PORT: '0',
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let output = '';
    await new Promise<void>((ok, fail) => {
      const timer = setTimeout(() => fail(new Error(`worker did not start: ${output}`)), 15_000);
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('webhooks started')) {
          clearTimeout(timer);
          ok();
        }
      };
      child.stdout?.on('data', onData);
      child.stderr?.on('data', onData);
      child.on('exit', (code) => fail(new Error(`worker exited with ${code}: ${output}`)));
    });
    return child;
  }

  const exited = (child: ChildProcess) =>
    new Promise<number | null>((r) =>
      child.exitCode !== null ? r(child.exitCode) : child.on('exit', (code) => r(code)),
    );

  async function setup(path: string) {
    const account = await api.account('pro');
    const res = await request(api.app)
      .post('/v1/webhooks')
      .set(bearer(account.apiKey))
      .send({ url: receiver.url(path), events: ['account.connected'] });
    expect(res.status).toBe(201);
    return { ...account, webhookId: res.body.id as string };
  }

  it('loses nothing when the worker is killed mid-delivery: a new worker delivers the same event id', async () => {
    let calls = 0;
    receiver.respond = (r) => {
      if (r.path !== '/crash') return 200;
      calls += 1;
      return calls === 1 ? 'hang' : 200;
    };
    const a = await setup('/crash');
    const child = await startChild();
    await api.connect(a.accountId, 'twitter', 'crash');
    // The first attempt reached the receiver over TLS (self-signed CA trusted via NODE_EXTRA_CA_CERTS) and hangs.
    await receiver.waitFor(() => receiver.on('/crash').length === 1, 20_000);
    child.kill('SIGKILL');
    await exited(child);
    const open = await api.db.webhookDelivery.findFirstOrThrow({ where: { webhookId: a.webhookId } });
    expect(open).toMatchObject({ status: 'pending', attempts: 0 });

    await api.startWebhooks();
    await receiver.waitFor(() => receiver.on('/crash').length === 2, 15_000);
    const [first, second] = receiver.on('/crash');
    expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    expect(second!.rawBody).toBe(first!.rawBody);
    for (let i = 0; i < 200; i += 1) {
      const row = await api.db.webhookDelivery.findUniqueOrThrow({ where: { id: open.id } });
      if (row.status === 'succeeded') break;
      await sleep(50);
    }
    expect(await api.db.webhookDelivery.findUniqueOrThrow({ where: { id: open.id } })).toMatchObject({
      status: 'succeeded',
      attempts: 1,
      lastStatusCode: 200,
    });
    await api.stopWebhooks();
  }, 80_000);

  it('rebuilds jobs from PostgreSQL after Redis loses its keys', async () => {
    receiver.respond = () => 200;
    const a = await setup('/flush');
    await api.connect(a.accountId, 'twitter', 'flush-1');
    await api.connect(a.accountId, 'twitter', 'flush-2');
    // Dispatch the first event only (delivery row, no job), then lose everything in Redis.
    const dispatched = await createWebhookDeliveryRepository(api.db).dispatchBatch(1);
    expect(dispatched.deliveries).toHaveLength(1);
    // Every master of a cluster (KEYS/SCAN see one node's keys only), or the one server.
    await deleteKeysMatching(api.redis, `*${api.env.QUEUE_PREFIX}*`);

    // The dispatcher takes the undispatched event; the already-dispatched delivery has no job and only the
    // reconciler (run by the job scheduler as soon as the worker upserts it) can bring it back.
    const worker = await api.startWebhooks();
    await receiver.waitFor(() => receiver.on('/flush').length === 2, 20_000);
    const orphanId = dispatched.deliveries[0]!.deliveryId;
    for (let i = 0; i < 200; i += 1) {
      if (
        (await api.db.webhookDelivery.findUniqueOrThrow({ where: { id: orphanId } })).status === 'succeeded'
      )
        break;
      await sleep(50);
    }
    expect((await api.db.webhookDelivery.findUniqueOrThrow({ where: { id: orphanId } })).status).toBe(
      'succeeded',
    );
    expect(await worker.reconcileNow()).toEqual({ requeued: 0 });
    const ids = receiver.on('/flush').map((r) => r.headers['webhook-id']);
    expect(new Set(ids).size).toBe(2);
    await api.stopWebhooks();
  });

  it('shuts down in order on SIGTERM', async () => {
    const child = await startChild();
    child.kill('SIGTERM');
    expect(await exited(child)).toBe(0);
  });
});
