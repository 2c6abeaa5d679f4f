import type { TQueueName, TQueues } from '@sps/queue';
import { Gauge, type Registry } from 'prom-client';

export const QUEUE_COUNT_STATES = [
  'waiting',
  'active',
  'delayed',
  'failed',
  'completed',
  'prioritized',
] as const;

/**
 * `queue_jobs{queue,state}`, the same gauge as the API's, read from Redis at scrape time. A scrape never
 * hangs on a Redis outage: counts that do not arrive within `timeoutMs` keep their previous values.
 */
export function registerQueueGauge(
  registry: Registry,
  queues: TQueues,
  names: readonly TQueueName[],
  timeoutMs = 2_000,
): Gauge<'queue' | 'state'> {
  return new Gauge({
    name: 'queue_jobs',
    help: 'Jobs per queue and state',
    labelNames: ['queue', 'state'] as const,
    registers: [registry],
    async collect() {
      let timer: NodeJS.Timeout | undefined;
      const read = Promise.all(
        names.map(async (name) => [name, await queues[name].getJobCounts(...QUEUE_COUNT_STATES)] as const),
      );
      const timeout = new Promise<null>((resolve) => {
        timer = setTimeout(() => resolve(null), timeoutMs);
      });
      const counted = await Promise.race([read, timeout])
        .catch(() => null)
        .finally(() => clearTimeout(timer));
      read.catch(() => undefined);
      if (!counted) return;
      for (const [queue, counts] of counted) {
        for (const [state, count] of Object.entries(counts)) this.set({ queue, state }, count);
      }
    },
  });
}
