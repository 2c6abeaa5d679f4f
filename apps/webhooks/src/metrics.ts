import type { TQueueName, TQueues } from '@sps/queue';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/** One delivery attempt's result; the last failed attempt of a delivery is `gave_up`, not `failed_attempt`. */
export type TDeliveryOutcome = 'delivered' | 'failed_attempt' | 'gave_up';

/** What the delivery processor records; a no-op in tests that do not look (see `noopWebhooksMetrics`). */
export interface TWebhooksMetrics {
  /** `attempts`: the attempt number this one was (1 = first), observed when a delivery ends. */
  deliveryAttempt(outcome: TDeliveryOutcome, attempts: number): void;
}

export const noopWebhooksMetrics: TWebhooksMetrics = { deliveryAttempt() {} };

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

export interface TWebhooksMetricsRegistry extends TWebhooksMetrics {
  registry: Registry;
}

/** The webhooks process's Prometheus registry: delivery outcomes and attempts, queue depth, Node defaults. */
export function createWebhooksMetrics(queues: TQueues): TWebhooksMetricsRegistry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const outcomes = new Counter({
    name: 'webhook_deliveries_total',
    help: 'Webhook delivery attempts by outcome (delivered, failed_attempt = will retry, gave_up = last attempt failed)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const attempts = new Histogram({
    name: 'webhook_delivery_attempts',
    help: 'Attempts a webhook delivery took until it was delivered or given up',
    labelNames: ['outcome'] as const,
    buckets: [1, 2, 3, 4, 5, 6, 8, 10],
    registers: [registry],
  });
  registerQueueGauge(registry, queues, ['webhook-delivery']);
  return {
    registry,
    deliveryAttempt(outcome, attempt) {
      outcomes.inc({ outcome });
      if (outcome !== 'failed_attempt') attempts.observe({ outcome }, attempt);
    },
  };
}
