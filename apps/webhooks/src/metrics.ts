import { registerQueueGauge } from '@sps/ops';
import type { TQueues } from '@sps/queue';
import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';

/** One delivery attempt's result; the last failed attempt of a delivery is `gave_up`, not `failed_attempt`. */
export type TDeliveryOutcome = 'delivered' | 'failed_attempt' | 'gave_up';

/** What the delivery processor records; a no-op in tests that do not look (see `noopWebhooksMetrics`). */
export interface TWebhooksMetrics {
  /** `attempts`: the attempt number this one was (1 = first), observed when a delivery ends. */
  deliveryAttempt(outcome: TDeliveryOutcome, attempts: number): void;
}

export const noopWebhooksMetrics: TWebhooksMetrics = { deliveryAttempt() {} };

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
