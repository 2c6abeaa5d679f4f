import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { TWebhookDeliveryRepository } from '@sps/db';
import type { TQueues } from '@sps/queue';
import { guardedLookup } from '@sps/safe-fetch';
import got, { type Got } from 'got';
import type { Logger } from 'pino';
import { DeliverySlots } from './delivery-slots.js';
import type { TMailer } from './mailer.js';
import { noopWebhooksMetrics, type TWebhooksMetrics } from './metrics.js';

export interface TWebhooksOptions {
  encryptionKey: Buffer;
  /** Delay before each retry; attempts = retries + 1. */
  retryDelaysMs: number[];
  timeoutMs: number;
  allowPrivateUrls: boolean;
  /** Consecutive failed deliveries that deactivate a webhook. */
  deactivateAfter: number;
  concurrency: number;
  /** Deliveries in flight per account in this process (WEBHOOK_ACCOUNT_CONCURRENCY); default half of concurrency. */
  perAccountConcurrency?: number;
  /** Deliveries in flight per webhook in this process (WEBHOOK_ENDPOINT_CONCURRENCY); default the account's. */
  perWebhookConcurrency?: number;
  /**
   * Extra trusted CA for receivers (in-process tests only). Processes trust extra CAs through
   * `NODE_EXTRA_CA_CERTS`, which Node reads at start-up; an option is the only way inside a running process.
   */
  certificateAuthority?: string | Buffer | undefined;
}

export interface TWebhooksContext {
  deliveries: TWebhookDeliveryRepository;
  queues: TQueues;
  logger: Logger;
  mailer: TMailer;
  options: TWebhooksOptions;
  /** Delivery outcomes and attempts; a no-op unless the process serves /metrics. */
  metrics: TWebhooksMetrics;
  http: Got;
  /** Retry delay chosen by the processor for a job that is about to fail, read by the backoff strategy. */
  nextDelays: Map<string, number>;
  /** Delivery slots per webhook and per account (fairness between tenants). */
  slots: DeliverySlots;
  close(): void;
}

function deliverySlots(options: TWebhooksOptions): DeliverySlots {
  const perAccount = options.perAccountConcurrency ?? Math.max(1, Math.ceil(options.concurrency / 2));
  return new DeliverySlots({ perAccount, perWebhook: options.perWebhookConcurrency ?? perAccount });
}

export function createWebhooksContext(deps: {
  deliveries: TWebhookDeliveryRepository;
  queues: TQueues;
  logger: Logger;
  mailer: TMailer;
  options: TWebhooksOptions;
  metrics?: TWebhooksMetrics | undefined;
}): TWebhooksContext {
  const { options } = deps;
  const agents = {
    https: new HttpsAgent({ keepAlive: true, maxSockets: options.concurrency }),
    http: new HttpAgent({ keepAlive: true, maxSockets: options.concurrency }),
  };
  // One POST per attempt: no retries inside got (the queue retries on the spec's schedule), no redirects
  // followed (a 3xx is a failed attempt), every status returned rather than thrown. The answer is never
  // decompressed (a small gzip body can inflate to gigabytes) and only its first bytes are read (see
  // delivery.processor.ts).
  const http = got.extend({
    method: 'POST',
    decompress: false,
    timeout: { request: options.timeoutMs },
    retry: { limit: 0 },
    followRedirect: false,
    throwHttpErrors: false,
    dnsLookup: guardedLookup(options.allowPrivateUrls) as never,
    agent: agents,
    ...(options.certificateAuthority
      ? { https: { certificateAuthority: options.certificateAuthority } }
      : {}),
  });
  return {
    ...deps,
    metrics: deps.metrics ?? noopWebhooksMetrics,
    http,
    nextDelays: new Map(),
    slots: deliverySlots(options),
    close() {
      agents.https.destroy();
      agents.http.destroy();
    },
  };
}
