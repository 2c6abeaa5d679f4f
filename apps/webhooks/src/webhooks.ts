import { createTokenRepository, createWebhookDeliveryRepository, type TDb } from '@sps/db';
import { bullPrefix, JOBS, type TQueues, type TRedis } from '@sps/queue';
import { type Job, Worker } from 'bullmq';
import type { Logger } from 'pino';
import { createWebhooksContext, type TWebhooksContext, type TWebhooksOptions } from './context.js';
import { deliveryBackoff, processDelivery } from './delivery.processor.js';
import { dispatchEvents, reconcileDeliveries } from './dispatch.processor.js';
import type { TMailer } from './mailer.js';
import type { TWebhooksMetrics } from './metrics.js';
import { sendReauthNotices } from './reauth-notice.js';

export interface TWebhooksWorkerDeps {
  db: TDb;
  /** For the worker's blocking connection (BullMQ duplicates it). */
  connection: TRedis;
  queues: TQueues;
  queuePrefix: string;
  logger: Logger;
  mailer: TMailer;
  options: TWebhooksOptions;
  /** The in-process dispatcher's period (low latency); the job scheduler also dispatches every `reconcileEveryMs`. */
  dispatchEveryMs: number;
  reconcileEveryMs: number;
  /** BullMQ lock: a crashed process's active delivery is taken over after about this long. */
  lockDurationMs?: number;
  /** Delivery outcomes and attempts (the process's /metrics); omitted: not recorded. */
  metrics?: TWebhooksMetrics;
}

export interface TWebhooksWorker {
  context: TWebhooksContext;
  worker: Worker;
  dispatchNow(): Promise<{ events: number; deliveries: number }>;
  reconcileNow(): Promise<{ requeued: number }>;
  close(): Promise<void>;
}

/** The webhook-delivery worker: delivery jobs, the outbox dispatcher and the reconciler. */
export async function createWebhooksWorker(deps: TWebhooksWorkerDeps): Promise<TWebhooksWorker> {
  const ctx = createWebhooksContext({
    deliveries: createWebhookDeliveryRepository(deps.db),
    queues: deps.queues,
    logger: deps.logger,
    mailer: deps.mailer,
    options: deps.options,
    metrics: deps.metrics,
  });

  let dispatching: Promise<{ events: number; deliveries: number }> | null = null;
  const dispatchNow = () => {
    // One run at a time per process; other processes are kept apart by row locks.
    dispatching ??= dispatchEvents(ctx).finally(() => {
      dispatching = null;
    });
    return dispatching;
  };
  const reconcileNow = async () => {
    await dispatchNow();
    return reconcileDeliveries(ctx);
  };

  const lockDuration = deps.lockDurationMs ?? 30_000;
  const worker = new Worker(
    'webhook-delivery',
    async (job: Job, token?: string) => {
      if (job.name === 'deliver') return processDelivery(ctx, job, token);
      if (job.name === 'dispatch') return reconcileNow();
      throw new Error(`No handler for job ${job.name}`);
    },
    {
      connection: deps.connection,
      prefix: bullPrefix(deps.queuePrefix),
      concurrency: deps.options.concurrency,
      lockDuration,
      stalledInterval: lockDuration,
      settings: { backoffStrategy: deliveryBackoff(ctx) },
    },
  );
  // Without an error listener a Redis hiccup would be an unhandled error. Job data is never logged.
  worker.on('error', (err) => deps.logger.error({ err: err.message }, 'webhooks worker error'));

  // Owners of accounts a network's refusal disconnected are e-mailed once, from the same tick.
  const tokens = createTokenRepository(deps.db);
  let noticing: Promise<unknown> | null = null;
  const tick = () => {
    void dispatchNow().catch((err: Error) => deps.logger.warn({ err: err.message }, 'dispatch failed'));
    noticing ??= sendReauthNotices({ tokens, mailer: deps.mailer, logger: deps.logger })
      .catch((err: Error) => deps.logger.warn({ err: err.message }, 're-auth notices failed'))
      .finally(() => {
        noticing = null;
      });
  };
  const dispatchTimer = setInterval(tick, deps.dispatchEveryMs);

  // The scheduler lives in Redis; re-upserting it regularly restores it after Redis loses its keys.
  const upsertScheduler = () =>
    deps.queues['webhook-delivery']
      .upsertJobScheduler(
        JOBS.webhookDispatch.jobId(),
        { every: deps.reconcileEveryMs },
        { name: 'dispatch', data: {}, opts: JOBS.webhookDispatch.options },
      )
      .catch((err: Error) =>
        deps.logger.warn({ err: err.message }, 'could not upsert the dispatch scheduler'),
      );
  await upsertScheduler();
  const keeper = setInterval(() => void upsertScheduler(), Math.max(deps.reconcileEveryMs, 5_000));
  keeper.unref();

  return {
    context: ctx,
    worker,
    dispatchNow,
    reconcileNow,
    async close() {
      clearInterval(dispatchTimer);
      clearInterval(keeper);
      await dispatching?.catch(() => undefined);
      await noticing;
      // Stop taking jobs and let active deliveries finish (BullMQ waits for them).
      await worker.close();
      ctx.close();
      deps.mailer.close();
    },
  };
}
