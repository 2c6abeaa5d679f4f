import { DEFAULT_TWITTER_ALLOWANCE, type TPlatform, type TTwitterAllowanceByPlan } from '@sps/core';
import { createMediaRepository, type TDb } from '@sps/db';
import type { TNetworkConnector } from '@sps/networks';
import {
  bullPrefix,
  duplicatePipelined,
  JOBS,
  publishDashboardNotice,
  type TQueues,
  type TRedis,
} from '@sps/queue';
import { DelayedError, type Job, Worker } from 'bullmq';
import type { Logger } from 'pino';
import { claimLeaseFor } from './claim-lease.js';
import { createPublisherContext, type TPublisherContext } from './context.js';
import { createDeferredJobs, type TDeferredJobs } from './deferred-jobs.js';
import { processDeleteRemote } from './delete-remote.processor.js';
import { collectionNotices, ReadLaterError, readBudgets } from './engagement.js';
import { processMetricsCollect, processMetricsRefresh } from './engagement.processor.js';
import { DEFAULT_ENGAGEMENT, type TEngagementOptions } from './engagement-options.js';
import { sweepMedia, type TMediaSweepConfig } from './media-sweep.processor.js';
import type { TPublisherMetrics } from './metrics.js';
import { createReadBudget, DEFAULT_READ_BUDGET, type TReadBudgetConfig } from './metrics-budget.js';
import { processPrepare } from './prepare.processor.js';
import { createPreparedPosts, PREPARED_PUBLISH_CONCURRENCY, restoreBackstop } from './prepared-posts.js';
import { NetworkWaitError, processPublish, publishBackoff, RetryLaterError } from './publish.processor.js';
import {
  createAccountLanes,
  createPublishLanes,
  LaneFullError,
  type TLaneOptions,
  type TPublishLanes,
} from './publish-lanes.js';
import { processQueuePlan, processQueueSlot } from './queue-slot.processor.js';
import { DEFAULT_READBACK_SETTLE_MS } from './readback.js';
import { DEFAULT_STUCK_AFTER_MS, reconcile } from './reconcile.processor.js';
import { processSchedule } from './schedule.processor.js';
import type { TTokenRefreshConfig } from './token-refresh.js';
import { processTokenRefresh } from './token-refresh.processor.js';

export interface TPublisherDeps {
  db: TDb;
  /** Shared by the workers' blocking connections (BullMQ duplicates it per worker). */
  connection: TRedis;
  queues: TQueues;
  queuePrefix: string;
  connectors: Partial<Record<TPlatform, TNetworkConnector>>;
  logger: Logger;
  encryptionKey: Buffer;
  concurrency: number;
  backoffBaseMs: number;
  /** A read-back that finds nothing is trusted this long after the send (default 60 s). */
  readbackSettleMs?: number;
  /** NETWORK_TIMEOUT, from which the write-ahead claim's lease is derived (default 30 s). */
  networkTimeoutMs?: number;
  /** Idempotency-key trust per network (default: the networks' key lifetimes, see readback.ts). */
  keyTrustMs?: Partial<Record<TPlatform, number>>;
  reconcileEveryMs: number;
  /** A `publishing` post untouched this long gets its publish job back (default 2 minutes). */
  stuckAfterMs?: number;
  /**
   * A job's lock lifetime (renewed at half of it while the job runs). A killed process's active jobs go
   * back to wait once it lapses and a stalled check runs (BullMQ default 30 s).
   */
  lockDurationMs?: number;
  /** Publish outcomes and latency (the process's /metrics); omitted: not recorded. */
  metrics?: TPublisherMetrics;
  /** Variant A's monthly twitter allowance by plan (default: the built-in numbers). */
  twitterAllowance?: TTwitterAllowanceByPlan;
  /** OAuth apps and endpoints for token refreshes (none: tokens are used until they expire). */
  oauth?: Omit<TTokenRefreshConfig, 'prefix'>;
  /** When metrics are read after publishing (METRICS_COLLECT_AFTER); default 1h,6h,24h,3d,7d,30d. */
  engagement?: Partial<TEngagementOptions>;
  /** Metrics jobs run at once (METRICS_CONCURRENCY): a lane of their own beside publishing. */
  metricsConcurrency?: number;
  /** Metrics reads' share of each network's rate limit (METRICS_READ_SHARE, METRICS_TENANT_SHARE, METRICS_READ_BUDGET). */
  readBudget?: Partial<TReadBudgetConfig>;
  /** The media library's retention sweep (none: no sweep runs in this process). */
  mediaSweep?: TMediaSweepConfig;
  /** Fair lanes per network and per account (publish-lanes.ts); omitted: none. */
  lanes?: TLaneOptions;
}

export interface TPublisher {
  context: TPublisherContext;
  workers: Worker[];
  reconcileNow(): Promise<Record<string, number>>;
  /** Runs the media sweep now (tests); throws without `mediaSweep`. */
  sweepMediaNow(now?: Date): Promise<{ removed: number }>;
  close(): Promise<void>;
}

function route(handlers: Record<string, (job: Job, token?: string) => Promise<unknown>>) {
  return async (job: Job, token?: string) => {
    const handler = handlers[job.name];
    if (!handler) throw new Error(`No handler for job ${job.name}`);
    return handler(job, token);
  };
}

/**
 * The publish job: a post whose networks only wait (media processing, a rate limit's retry-after) or wait
 * for a lane (publish-lanes.ts) moves its own job to the delayed set (same id, no attempt spent) and frees
 * the slot at once (DESIGN invariant 10).
 */
async function publishJob(
  ctx: TPublisherContext,
  job: Job,
  token: string | undefined,
  lanes?: TPublishLanes,
  deferred?: TDeferredJobs,
) {
  deferred?.forget(job.id);
  try {
    return await processPublish(ctx, job, undefined, lanes);
  } catch (error) {
    const delayMs =
      error instanceof LaneFullError
        ? error.delayMs
        : error instanceof NetworkWaitError
          ? Math.max(error.waitMs, 100)
          : null;
    if (delayMs === null || !token) throw error;
    await job.moveToDelayed(Date.now() + delayMs, token);
    // Promoted when a place of its network frees here, the oldest first; its delay is the fallback.
    if (error instanceof LaneFullError) deferred?.add(job, error.platforms);
    throw new DelayedError();
  }
}

/** The publisher's workers for the publish, schedule and queue-slot queues. */
export async function createPublisher(deps: TPublisherDeps): Promise<TPublisher> {
  const base = createPublisherContext({
    db: deps.db,
    queues: deps.queues,
    connectors: deps.connectors,
    logger: deps.logger,
    metrics: deps.metrics,
    redis: deps.connection,
    oauth: { apps: {}, baseUrls: {}, timeoutMs: 15_000, ...deps.oauth, prefix: bullPrefix(deps.queuePrefix) },
    options: {
      encryptionKey: deps.encryptionKey,
      backoffBaseMs: deps.backoffBaseMs,
      readbackSettleMs: deps.readbackSettleMs ?? DEFAULT_READBACK_SETTLE_MS,
      claimLease: claimLeaseFor(deps.networkTimeoutMs ?? 30_000),
      ...(deps.keyTrustMs ? { keyTrustMs: deps.keyTrustMs } : {}),
      stuckAfterMs: deps.stuckAfterMs ?? DEFAULT_STUCK_AFTER_MS,
      twitterAllowance: deps.twitterAllowance ?? DEFAULT_TWITTER_ALLOWANCE,
    },
  });
  const ctx = base as TPublisherContext;
  const retryBackoff = publishBackoff(deps.backoffBaseMs);
  // Each slot pool (the publish worker's, the prepared posts') gets its network shares; accounts are global.
  // Their own connection, auto-pipelined: a batch of posts ending together gives its places back in one write.
  const laneRedis =
    deps.lanes && deps.lanes.accountCap > 0
      ? duplicatePipelined(deps.connection, 'sps-publisher-lanes')
      : null;
  laneRedis?.on('error', (err: Error) => deps.logger.warn({ err: err.message }, 'redis error (lanes)'));
  const accountLanes =
    deps.lanes && laneRedis ? createAccountLanes(laneRedis, bullPrefix(deps.queuePrefix), deps.lanes) : null;
  const deferred = createDeferredJobs((error) =>
    deps.logger.debug({ err: error.message }, 'deferred publish job not promoted'),
  );
  const workerLanes = deps.lanes
    ? createPublishLanes(deps.concurrency, deps.lanes, accountLanes, {
        wait: 'flowing',
        onFree: (platform) => deferred.wake(platform),
      })
    : undefined;
  const preparedLanes = deps.lanes
    ? createPublishLanes(PREPARED_PUBLISH_CONCURRENCY, deps.lanes, accountLanes, { wait: true })
    : undefined;
  if (workerLanes?.enabled) deps.metrics?.watchLanes?.('worker', workerLanes.snapshot);
  if (preparedLanes?.enabled) deps.metrics?.watchLanes?.('prepared', preparedLanes.snapshot);
  ctx.prepared = createPreparedPosts(
    base,
    {
      run: (job, preloaded) => processPublish(ctx, job, preloaded, preparedLanes),
      retryDelay: (error) =>
        error instanceof LaneFullError
          ? error.delayMs
          : error instanceof RetryLaterError
            ? retryBackoff(1, 'custom', error)
            : deps.backoffBaseMs,
    },
    preparedLanes,
  );
  const prefix = bullPrefix(deps.queuePrefix);
  const locks = deps.lockDurationMs
    ? { lockDuration: deps.lockDurationMs, stalledInterval: deps.lockDurationMs }
    : {};
  const common = { connection: deps.connection, prefix, concurrency: deps.concurrency, ...locks };

  const engagement: TEngagementOptions = { ...DEFAULT_ENGAGEMENT, ...deps.engagement };
  ctx.engagement = engagement;
  readBudgets.set(
    ctx,
    createReadBudget(deps.connection, deps.queuePrefix, { ...DEFAULT_READ_BUDGET, ...deps.readBudget }),
  );
  // A collection that landed: the dashboards showing the post refresh its figures (one notice per post).
  collectionNotices.set(ctx, (rows) => {
    const posts = new Map(rows.map((r) => [r.postId, r.accountId]));
    for (const [postId, accountId] of posts) {
      void publishDashboardNotice(deps.connection, deps.queuePrefix, {
        a: accountId,
        p: postId,
        k: 'metrics',
      });
    }
  });
  const mediaRepository = createMediaRepository(deps.db);
  const sweepNow = (now?: Date) => {
    if (!deps.mediaSweep) throw new Error('the media sweep is not configured in this process');
    return sweepMedia(mediaRepository, deps.mediaSweep, deps.logger, now);
  };
  const workers = [
    new Worker(
      'publish',
      route({
        publish: (job, token) => publishJob(ctx, job, token, workerLanes, deferred),
        'delete-remote': (job) => processDeleteRemote(ctx, job),
      }),
      { ...common, settings: { backoffStrategy: publishBackoff(deps.backoffBaseMs) } },
    ),
    new Worker(
      'schedule',
      route({
        schedule: (job) => processSchedule(ctx, job),
        prepare: (job) => processPrepare(ctx, job),
        reconcile: () => reconcile(ctx),
        'token-refresh': (job) => processTokenRefresh(ctx, job),
        'media-sweep': () => sweepNow(),
      }),
      common,
    ),
    new Worker(
      'queue-slot',
      route({
        'queue-slot': (job) => processQueueSlot(ctx, job),
        'queue-plan': (job) => processQueuePlan(ctx, job),
      }),
      common,
    ),
    // Reading figures has its own queue and slots, so it never takes what publishing needs; a rate limit
    // waits what the network asked (or the job's exponential backoff) with what was read kept.
    new Worker(
      'metrics',
      route({
        'metrics-collect': (job, token) => processMetricsCollect(ctx, job, engagement, token),
        'metrics-refresh': (job, token) => processMetricsRefresh(ctx, job, token),
      }),
      {
        ...common,
        concurrency: deps.metricsConcurrency ?? 4,
        settings: {
          backoffStrategy: (attemptsMade: number, _type?: string, err?: Error) =>
            err instanceof ReadLaterError && err.failure.retryAfterMs !== undefined
              ? Math.max(1000, err.failure.retryAfterMs)
              : Math.min(30_000 * 2 ** Math.max(0, attemptsMade - 1), 30 * 60_000),
        },
      },
    ),
  ];
  for (const worker of workers) {
    // Without an error listener a Redis hiccup would be an unhandled error; payloads are never logged.
    worker.on('error', (err) => deps.logger.error({ err: err.message, queue: worker.name }, 'worker error'));
    worker.on('failed', (job, err) =>
      deps.logger.warn(
        { queue: worker.name, jobId: job?.id, attemptsMade: job?.attemptsMade, err: err.message },
        'job failed',
      ),
    );
  }

  // The schedulers live in Redis; re-upserting them regularly restores them after Redis loses its keys.
  const upsertScheduler = () =>
    Promise.all([
      deps.queues.schedule
        .upsertJobScheduler(
          'reconcile',
          { every: deps.reconcileEveryMs },
          { name: 'reconcile', data: {}, opts: JOBS.reconcile.options },
        )
        .catch((err: Error) =>
          deps.logger.warn({ err: err.message }, 'could not upsert the reconcile scheduler'),
        ),
      deps.mediaSweep
        ? deps.queues.schedule
            .upsertJobScheduler(
              'media-sweep',
              { every: deps.mediaSweep.everyMs ?? 60 * 60 * 1000 },
              { name: 'media-sweep', data: {}, opts: JOBS.mediaSweep.options },
            )
            .catch((err: Error) =>
              deps.logger.warn({ err: err.message }, 'could not upsert the media sweep scheduler'),
            )
        : undefined,
    ]);
  await upsertScheduler();
  const keeper = setInterval(() => void upsertScheduler(), Math.max(deps.reconcileEveryMs, 5_000));
  keeper.unref();

  return {
    context: ctx,
    workers,
    reconcileNow: () => reconcile(ctx),
    sweepMediaNow: (now?: Date) => sweepNow(now),
    async close() {
      clearInterval(keeper);
      // Stop taking jobs at once and let active ones finish (BullMQ waits for them). Started before the
      // prepared posts are closed: those hand their waiting posts to publish jobs while a started one may
      // still run for a while, and a worker still fetching would pick them up in this stopping process.
      const closing = Promise.all(workers.map((w) => w.close()));
      // Posts prepared here and not yet started: their schedule jobs fire at the due time instead.
      for (const left of await ctx.prepared.close()) {
        await restoreBackstop(deps.queues, left.post.id, left.dueAt).catch((err: Error) =>
          deps.logger.warn(
            { postId: left.post.id, err: err.message },
            'could not bring a schedule job forward',
          ),
        );
      }
      await closing;
      // Last: the jobs that just finished gave their places back through it.
      await laneRedis?.quit().catch(() => undefined);
    },
  };
}
