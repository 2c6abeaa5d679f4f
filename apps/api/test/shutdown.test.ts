import { type ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { freePort, metricSample, waitUntil } from '../../../test/processes.js';
import { startTestApi, type TTestApi } from './harness.js';

// The real API process (`node apps/api/dist/main.js`): on SIGTERM or SIGINT it stops accepting, lets the
// request in flight finish (a Variant A publish waiting for the outcome), closes Redis and PostgreSQL
// and exits 0, within a bound. A keep-alive client (fetch) must not hold the process open.

const MAIN = resolve(import.meta.dirname, '../dist/main.js');
const PUBLISH_WAIT_MS = 3_000;

interface TApiProcess {
  child: ChildProcess;
  base: string;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
}

describe('API process: graceful shutdown', () => {
  let api: TTestApi;
  const processes: TApiProcess[] = [];

  beforeAll(async () => {
    // Only its database, Redis prefix and helpers: the process under test serves the requests.
    api = await startTestApi();
  });
  afterAll(async () => {
    for (const p of processes)
      if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await api.close();
  });

  async function start(): Promise<TApiProcess> {
    const port = await freePort();
    const child = spawn(process.execPath, [MAIN], {
      env: {
        PATH: process.env.PATH ?? '',
        NODE_ENV: 'test',
        PORT: String(port),
        HOST: '127.0.0.1',
        DATABASE_URL: api.env.DATABASE_URL,
        REDIS_URL: api.env.REDIS_URL,
        QUEUE_PREFIX: api.env.QUEUE_PREFIX,
        LOG_LEVEL: 'warn',
        ADMIN_TOKEN: 'operator-token-shutdown-test',
        PUBLISH_WAIT: `${PUBLISH_WAIT_MS}ms`,
        RATE_LIMIT_A_PER_MINUTE: '100000',
        RATE_LIMIT_A_PUBLISH_PER_HOUR: '100000',
        NETWORK_AVAILABILITY: 'twitter=live,threads=live,bluesky=testing,linkedin=testing,mastodon=testing',
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
    const proc: TApiProcess = {
      child,
      base: `http://127.0.0.1:${port}`,
      output: () => output,
      exited: new Promise((done) =>
        child.once('exit', (code, signal) => done({ code, signal, at: Date.now() })),
      ),
    };
    processes.push(proc);
    await waitUntil(
      'the API /healthz to answer 200',
      async () => {
        if (child.exitCode !== null) throw new Error(`api exited early: ${output}`);
        try {
          return (await fetch(`${proc.base}/healthz`, { signal: AbortSignal.timeout(5_000) })).status === 200;
        } catch {
          return false;
        }
      },
      60_000,
      100,
    );
    return proc;
  }

  it.each(['SIGTERM', 'SIGINT'] as const)(
    '%s: the request in flight completes, then the process exits 0',
    async (signal) => {
      const proc = await start();
      const { apiKey, accountId } = await api.account('pro');
      await api.connect(accountId, 'twitter');

      const metrics = await fetch(`${proc.base}/metrics`, {
        headers: { Authorization: 'Bearer operator-token-shutdown-test' },
      });
      expect(metrics.status).toBe(200);
      const text = await metrics.text();
      expect(
        metricSample(text, 'http_request_duration_seconds_count', { route: '/healthz', status: '200' }),
      ).toBeGreaterThanOrEqual(1);
      expect(metricSample(text, 'queue_jobs', { queue: 'publish', state: 'waiting' })).toBeGreaterThanOrEqual(
        0,
      );

      // No publisher runs: the publish waits the whole PUBLISH_WAIT and answers with the post still publishing.
      const startedAt = Date.now();
      const inFlight = fetch(`${proc.base}/api/posts`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
        body: JSON.stringify({ content: `in flight at ${signal}`, platforms: ['twitter'], published: true }),
      }).then(async (res) => ({ status: res.status, body: await res.json(), at: Date.now() }));
      inFlight.catch(() => undefined);
      await waitUntil(
        'the publish request to be waiting for the outcome',
        async () => (await api.db.post.count({ where: { accountId, status: 'publishing' } })) === 1,
        20_000,
        20,
      );
      expect(Date.now() - startedAt).toBeLessThan(PUBLISH_WAIT_MS);

      const signalledAt = Date.now();
      proc.child.kill(signal);
      const answered = await inFlight;
      let timer: NodeJS.Timeout | undefined;
      const exit = await Promise.race([
        proc.exited,
        new Promise<'timeout'>((done) => {
          timer = setTimeout(() => done('timeout'), 20_000);
        }),
      ]);
      clearTimeout(timer);

      expect(answered.status).toBe(201);
      expect(answered.body.post).toMatchObject({ content: `in flight at ${signal}` });
      const clean = exit !== 'timeout' && exit.code === 0;
      expect({ exit: clean ? 'exit 0' : exit, output: clean ? '' : proc.output() }).toEqual({
        exit: 'exit 0',
        output: '',
      });
      if (exit === 'timeout') return;
      // Answered first, exited after; and the idle keep-alive socket of the client did not hold it open.
      expect(answered.at).toBeLessThanOrEqual(exit.at);
      expect(exit.at - signalledAt).toBeLessThan(PUBLISH_WAIT_MS + 10_000);
    },
    90_000,
  );
});
