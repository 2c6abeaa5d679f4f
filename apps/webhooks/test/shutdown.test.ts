import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer as createHttpsServer, type Server } from 'node:https';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { freePort, httpGet, metricSample, waitUntil } from '../../../test/processes.js';
import { bearer, startTestApi, type TTestApi } from '../../api/test/harness.js';
import { makeCertificate, startReceiver, type TCertificate, type TReceiver } from './support/receiver.js';

// The real webhooks process (`node apps/webhooks/dist/main.js`): its metrics port answers /healthz and
// /metrics with the delivery series, and SIGTERM or SIGINT ends it with exit code 0 once the delivery
// in flight got its answer and the outcome is recorded.

const MAIN = resolve(import.meta.dirname, '../dist/main.js');
const ENCRYPTION_KEY = randomBytes(32).toString('hex');
const SLOW_ANSWER_MS = 1_500;

interface TWorker {
  child: ChildProcess;
  port: number;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

describe('webhooks process: metrics port and graceful shutdown', () => {
  let cert: TCertificate;
  let receiver: TReceiver;
  /** Answers 200 after SLOW_ANSWER_MS, so a delivery is in flight when the signal comes. */
  let slow: Server;
  let slowPort = 0;
  let slowHits = 0;
  let api: TTestApi;
  const workers: TWorker[] = [];

  beforeAll(async () => {
    cert = makeCertificate();
    receiver = await startReceiver(cert);
    receiver.respond = (r) => (r.path === '/fail' ? 500 : 200);
    slow = createHttpsServer({ cert: cert.cert, key: cert.key }, (req, res) => {
      req.resume();
      req.on('end', () => {
        slowHits += 1;
        setTimeout(() => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'), SLOW_ANSWER_MS);
      });
    });
    await new Promise<void>((done) => slow.listen(0, '127.0.0.1', done));
    const address = slow.address();
    slowPort = typeof address === 'object' && address ? address.port : 0;
    // No in-process worker: the process under test is the only one delivering.
    api = await startTestApi({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', ENCRYPTION_KEY } });
  });
  afterAll(async () => {
    for (const w of workers)
      if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
    await api.close();
    await receiver.close();
    slow.closeAllConnections();
    await new Promise((done) => slow.close(done));
    cert.remove();
  });

  /** `npm run start:webhooks` with its metrics port; resolves once /healthz answers 200. */
  async function start(): Promise<TWorker> {
    const port = await freePort();
    const child = spawn(process.execPath, [MAIN], {
      env: {
        PATH: process.env.PATH ?? '',
        NODE_ENV: 'test',
        DATABASE_URL: api.env.DATABASE_URL,
        REDIS_URL: api.env.REDIS_URL,
        QUEUE_PREFIX: api.env.QUEUE_PREFIX,
        ENCRYPTION_KEY,
        NODE_EXTRA_CA_CERTS: cert.certPath,
        WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
        WEBHOOK_RETRY_DELAYS: '100ms,100ms,100ms,100ms,100ms',
        WEBHOOK_DISPATCH_EVERY: '100ms',
        WEBHOOK_TIMEOUT: '10s',
        METRICS_PORT: String(port),
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const worker: TWorker = {
      child,
      port,
      output: () => output,
      exited: new Promise((done) => child.once('exit', (code, signal) => done({ code, signal }))),
    };
    workers.push(worker);
    await waitUntil(
      'the webhooks /healthz to answer 200',
      async () => {
        if (child.exitCode !== null) throw new Error(`webhooks exited early: ${output}`);
        return (await httpGet(port, '/healthz'))?.status === 200;
      },
      60_000,
      100,
    );
    return worker;
  }

  /** A new account whose account.connected events go to `url`; connecting its twitter account emits one. */
  async function subscribedAccount(url: string) {
    const account = await api.account('pro');
    const res = await request(api.app)
      .post('/v1/webhooks')
      .set(bearer(account.apiKey))
      .send({ url, events: ['account.connected'] });
    expect(res.status).toBe(201);
    return { ...account, webhookId: res.body.id as string };
  }

  const deliveryOf = (webhookId: string) =>
    api.db.webhookDelivery.findFirst({ where: { webhookId }, select: { status: true, attempts: true } });

  /** A delivery in flight when `signal` arrives: exit 0 within the bound, its answer recorded. */
  async function stopsGracefully(worker: TWorker, signal: NodeJS.Signals) {
    const hitsBefore = slowHits;
    const a = await subscribedAccount(`https://127.0.0.1:${slowPort}/slow`);
    await api.connect(a.accountId, 'twitter', `slow-${signal}`);
    await waitUntil('the delivery to reach the slow receiver', async () => slowHits > hitsBefore, 30_000, 20);
    const signalledAt = Date.now();
    worker.child.kill(signal);
    let timer: NodeJS.Timeout | undefined;
    const exit = await Promise.race([
      worker.exited,
      new Promise<'timeout'>((done) => {
        timer = setTimeout(() => done('timeout'), 25_000);
      }),
    ]);
    clearTimeout(timer);
    const tookMs = Date.now() - signalledAt;
    const clean = exit !== 'timeout' && exit.code === 0;
    expect({ exit, output: clean ? '' : worker.output() }).toEqual({
      exit: { code: 0, signal: null },
      output: '',
    });
    expect(tookMs).toBeLessThan(25_000);
    // It waited for the receiver's answer rather than dropping the attempt.
    expect(tookMs).toBeGreaterThanOrEqual(SLOW_ANSWER_MS / 2);
    expect(await deliveryOf(a.webhookId)).toEqual({ status: 'succeeded', attempts: 1 });
  }

  it('serves /healthz and /metrics with delivery outcomes, attempts and queue depth; SIGTERM exits 0 after the delivery in flight', async () => {
    const worker = await start();
    const ok = await subscribedAccount(receiver.url('/ok'));
    const failing = await subscribedAccount(receiver.url('/fail'));
    await api.connect(ok.accountId, 'twitter', 'metrics-ok');
    await api.connect(failing.accountId, 'twitter', 'metrics-fail');
    await waitUntil(
      'one delivery to succeed and the other to give up',
      async () =>
        (await deliveryOf(ok.webhookId))?.status === 'succeeded' &&
        (await deliveryOf(failing.webhookId))?.status === 'failed',
      30_000,
    );
    expect(receiver.on('/ok')).toHaveLength(1);
    expect(receiver.on('/fail')).toHaveLength(6);

    // The counters move right after the row is written, the job's state right after that: poll the scrape.
    let text = '';
    await waitUntil(
      '/metrics to show both deliveries ended',
      async () => {
        const scraped = await httpGet(worker.port, '/metrics');
        expect(scraped?.status).toBe(200);
        text = scraped!.text;
        return (
          metricSample(text, 'webhook_deliveries_total', { outcome: 'gave_up' }) === 1 &&
          metricSample(text, 'webhook_deliveries_total', { outcome: 'delivered' }) === 1 &&
          (metricSample(text, 'queue_jobs', { queue: 'webhook-delivery', state: 'failed' }) ?? 0) >= 1
        );
      },
      15_000,
      200,
    );
    expect(metricSample(text, 'webhook_deliveries_total', { outcome: 'delivered' })).toBe(1);
    expect(metricSample(text, 'webhook_deliveries_total', { outcome: 'failed_attempt' })).toBe(5);
    expect(metricSample(text, 'webhook_deliveries_total', { outcome: 'gave_up' })).toBe(1);
    expect(metricSample(text, 'webhook_delivery_attempts_count', { outcome: 'delivered' })).toBe(1);
    expect(metricSample(text, 'webhook_delivery_attempts_sum', { outcome: 'delivered' })).toBe(1);
    expect(metricSample(text, 'webhook_delivery_attempts_count', { outcome: 'gave_up' })).toBe(1);
    expect(metricSample(text, 'webhook_delivery_attempts_sum', { outcome: 'gave_up' })).toBe(6);
    expect(metricSample(text, 'webhook_delivery_attempts_bucket', { outcome: 'gave_up', le: '5' })).toBe(0);
    expect(metricSample(text, 'webhook_delivery_attempts_bucket', { outcome: 'gave_up', le: '6' })).toBe(1);
    expect(
      metricSample(text, 'queue_jobs', { queue: 'webhook-delivery', state: 'waiting' }),
    ).toBeGreaterThanOrEqual(0);
    expect(
      metricSample(text, 'queue_jobs', { queue: 'webhook-delivery', state: 'failed' }),
    ).toBeGreaterThanOrEqual(1);
    // Ids never become label values.
    expect(text).not.toContain(ok.webhookId);

    await stopsGracefully(worker, 'SIGTERM');
    expect(await httpGet(worker.port, '/healthz')).toBeNull();
  }, 120_000);

  it('SIGINT exits 0 after the delivery in flight', async () => {
    const worker = await start();
    await stopsGracefully(worker, 'SIGINT');
  }, 120_000);
});
