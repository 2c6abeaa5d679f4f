import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TPlatform } from '@sps/core';
import type { TRunningSim } from '@sps/network-sim';
import request from 'supertest';
import { freePort, httpGet, metricSample } from '../../../test/processes.js';
import { bearer, startTestApi, type TTestApi } from '../../api/test/harness.js';
import { startPublisherProcess, type TPublisherProcess, waitUntil } from './support.js';

// The real publisher process (`node apps/publisher/dist/main.js`): its metrics port answers /healthz and
// /metrics with the publish series, and SIGTERM or SIGINT ends it with exit code 0 once the job in
// flight is finished (the network's answer recorded, the post final).

describe('publisher process: metrics port and graceful shutdown', () => {
  let api: TTestApi;
  let sim: TRunningSim;
  const processes: TPublisherProcess[] = [];

  beforeAll(async () => {
    api = await startTestApi({ sim: true });
    sim = api.sim!;
  });
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop(2_000)));
    await api.close();
  });

  /** Starts the process with its metrics port and waits until /healthz answers 200. */
  async function start(): Promise<{ proc: TPublisherProcess; port: number }> {
    const port = await freePort();
    const proc = startPublisherProcess(api, sim, { PUBLISH_CONCURRENCY: '4', METRICS_PORT: String(port) });
    processes.push(proc);
    await waitUntil(
      'the publisher /healthz to answer 200',
      async () => {
        if (proc.child.exitCode !== null) throw new Error(`publisher exited early: ${proc.stderr()}`);
        return (await httpGet(port, '/healthz'))?.status === 200;
      },
      60_000,
      100,
    );
    return { proc, port };
  }

  async function publish(apiKey: string, content: string, platforms: TPlatform[]): Promise<string> {
    const created = await request(api.app).post('/v1/posts').set(bearer(apiKey)).send({ content, platforms });
    expect(created.status).toBe(201);
    const res = await request(api.app).post(`/v1/posts/${created.body.id}/publish`).set(bearer(apiKey));
    expect(res.status).toBe(200);
    return created.body.id as string;
  }

  const statusOf = async (id: string) =>
    (await api.db.post.findUniqueOrThrow({ where: { id }, select: { status: true } })).status;

  /**
   * A slow network call in flight when `signal` arrives: the process exits 0 within the bound, after the
   * network's answer was recorded and the post went final.
   */
  async function stopsGracefully(proc: TPublisherProcess, apiKey: string, signal: NodeJS.Signals) {
    sim.sim.addFault({ platform: 'twitter', kind: 'slow', delayMs: 1_500, remaining: 1 });
    const id = await publish(apiKey, `in flight at ${signal}`, ['twitter']);
    await waitUntil(
      'the twitter call to be in flight',
      async () => (await api.db.segmentDelivery.count({ where: { postId: id, status: 'sending' } })) > 0,
      30_000,
      20,
    );
    const signalledAt = Date.now();
    proc.child.kill(signal);
    let timer: NodeJS.Timeout | undefined;
    const exit = await Promise.race([
      proc.exited,
      new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), 25_000);
      }),
    ]);
    clearTimeout(timer);
    const tookMs = Date.now() - signalledAt;
    // stderr only shows up when the exit is wrong, to say why.
    const clean = exit !== 'timeout' && exit.code === 0;
    expect({ exit, stderr: clean ? '' : proc.stderr() }).toEqual({
      exit: { code: 0, signal: null },
      stderr: '',
    });
    expect(tookMs).toBeLessThan(25_000);
    // The job in flight was finished, not abandoned: the answer is recorded and the post is final.
    expect(await statusOf(id)).toBe('published');
    expect(
      await api.db.segmentDelivery.findMany({ where: { postId: id }, select: { status: true } }),
    ).toEqual([{ status: 'sent' }]);
  }

  it('serves /healthz and /metrics with publish outcomes, latency and queue depth; SIGTERM exits 0 after the job in flight', async () => {
    const { proc, port } = await start();
    const { apiKey, accountId } = await api.account('pro');
    await api.connect(accountId, 'twitter');
    await api.connect(accountId, 'mastodon');

    // One success on twitter, one permanent refusal on mastodon.
    sim.sim.addFault({
      platform: 'mastodon',
      kind: 'rejected',
      remaining: 1,
      pathIncludes: '/api/v1/statuses',
    });
    const id = await publish(apiKey, 'metrics please', ['twitter', 'mastodon']);
    await waitUntil('the post to be final', async () => (await statusOf(id)) !== 'publishing', 30_000, 50);
    // A tweet X stores while its answer is lost: read back and counted as resolved by reading back.
    sim.sim.addFault({
      platform: 'twitter',
      kind: 'hang_after_create',
      remaining: 1,
      pathIncludes: '/2/tweets',
    });
    const lost = await publish(apiKey, 'answer lost', ['twitter']);
    await waitUntil(
      'the second post to be final',
      async () => (await statusOf(lost)) !== 'publishing',
      30_000,
      50,
    );
    expect(await statusOf(lost)).toBe('published');

    // The post goes final before BullMQ marks its job completed: poll the scrape.
    let text = '';
    await waitUntil(
      '/metrics to count the completed publish job',
      async () => {
        const scraped = await httpGet(port, '/metrics');
        expect(scraped?.status).toBe(200);
        text = scraped!.text;
        return (metricSample(text, 'queue_jobs', { queue: 'publish', state: 'completed' }) ?? 0) >= 2;
      },
      15_000,
      200,
    );
    expect(
      metricSample(text, 'publish_outcomes_total', {
        platform: 'twitter',
        outcome: 'success',
        kind: 'none',
        resolution: 'none',
      }),
    ).toBe(1);
    expect(
      metricSample(text, 'publish_outcomes_total', {
        platform: 'twitter',
        outcome: 'success',
        kind: 'none',
        resolution: 'readback',
      }),
    ).toBe(1);
    expect(metricSample(text, 'publish_readbacks_total', { platform: 'twitter', result: 'found' })).toBe(1);
    expect(
      metricSample(text, 'publish_outcomes_total', {
        platform: 'mastodon',
        outcome: 'failed',
        kind: 'rejected',
      }),
    ).toBe(1);
    expect(metricSample(text, 'publish_latency_seconds_count', { platform: 'twitter' })).toBe(2);
    const latency = metricSample(text, 'publish_latency_seconds_sum', { platform: 'twitter' });
    expect(latency).toBeGreaterThan(0);
    expect(latency).toBeLessThan(30);
    expect(metricSample(text, 'publish_latency_seconds_bucket', { platform: 'twitter', le: '+Inf' })).toBe(2);
    expect(metricSample(text, 'publish_latency_seconds_count', { platform: 'mastodon' })).toBeUndefined();
    for (const queue of ['publish', 'schedule', 'queue-slot']) {
      expect(metricSample(text, 'queue_jobs', { queue, state: 'waiting' })).toBeGreaterThanOrEqual(0);
    }
    expect(metricSample(text, 'queue_jobs', { queue: 'publish', state: 'completed' })).toBeGreaterThanOrEqual(
      1,
    );
    // The fair lanes of both slot pools (PUBLISH_CONCURRENCY 4 and the prepared posts' 200, share 0.25):
    // nothing held or waiting once the posts are final; a network that published keeps its 0 row.
    expect(metricSample(text, 'publish_lane_network_limit', { pool: 'worker' })).toBe(1);
    expect(metricSample(text, 'publish_lane_network_limit', { pool: 'prepared' })).toBe(50);
    expect(metricSample(text, 'publish_lane_running', { pool: 'worker', platform: 'twitter' })).toBe(0);
    expect(metricSample(text, 'publish_lane_waiting', { pool: 'worker' })).toBe(0);
    expect(metricSample(text, 'publish_lane_waiting', { pool: 'prepared' })).toBe(0);
    // Ids and content never become label values.
    expect(text).not.toContain(id);
    expect(text).not.toContain('metrics please');
    expect((await httpGet(port, '/nope'))?.status).toBe(404);

    await stopsGracefully(proc, apiKey, 'SIGTERM');
    // The metrics port went away with the process.
    expect(await httpGet(port, '/healthz')).toBeNull();
  }, 120_000);

  it('SIGINT exits 0 after the job in flight', async () => {
    const { proc } = await start();
    const { apiKey, accountId } = await api.account('pro');
    await api.connect(accountId, 'twitter');
    await stopsGracefully(proc, apiKey, 'SIGINT');
  }, 120_000);
});
