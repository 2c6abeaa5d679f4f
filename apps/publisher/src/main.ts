import { setFlagsFromString } from 'node:v8';
import { DEVELOPMENT_KEY_WARNING, wantsPrettyLogs } from '@sps/core';
import { createDb } from '@sps/db';
import { createConnectors, createSpoolBudget } from '@sps/networks';
import { logOptions, startMetricsServer, stopOnSignals } from '@sps/ops';
import { createQueues, createRedisFactory } from '@sps/queue';
import { createStorage } from '@sps/storage';
import { pino } from 'pino';
import pretty from 'pino-pretty';
import { loadEnv } from './env.js';
import { createPublisherMetrics } from './metrics.js';
import { ownMediaSource } from './own-media.js';
import { createPublisher } from './publisher.js';

// Prisma's query compiler is a WebAssembly module compiled on the first query: with V8's default tiering that
// added ~65 MiB of RSS, with Liftoff's baseline code only (no TurboFan tier-up) ~27 MiB. Query plans are cached
// and the time goes to PostgreSQL, so queries did not get measurably slower (issue 23; figures in docs/performance.md).
// Set before the first query: the flag is read when a module compiles.
setFlagsFromString('--liftoff-only');
const env = loadEnv();
// JSON lines in production; pino-pretty in development on a terminal or with LOG_PRETTY=true.
// Redaction, and errors logged as message and code only (never a failed request's options and headers).
const options = logOptions('publisher', env.LOG_LEVEL);
const logger = wantsPrettyLogs(env, Boolean(process.stdout.isTTY))
  ? pino(options, pretty({ sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' }))
  : // Asynchronous writes (one per burst of lines, not per line), flushed at exit: see apps/api/src/logger.ts.
    pino(options, pino.destination({ sync: false }));
if (env.usesDevelopmentKey) {
  // Loud on purpose: also on stderr whatever LOG_LEVEL says.
  logger.warn(DEVELOPMENT_KEY_WARNING);
  process.stderr.write(`\n*** WARNING: ${DEVELOPMENT_KEY_WARNING} ***\n\n`);
}
const db = createDb(env.DATABASE_URL, { poolMax: env.DB_POOL_MAX });
// One Redis (REDIS_URL) or a Redis Cluster (REDIS_CLUSTER_NODES).
const connection = createRedisFactory({ url: env.REDIS_URL, clusterNodes: env.REDIS_CLUSTER_NODES }).worker();
connection.on('error', (err) => logger.warn({ err: err.message }, 'redis error'));
const queues = createQueues(connection, env.QUEUE_PREFIX);
const storage = createStorage(env.mediaStorage);
const connectors = createConnectors({
  baseUrls: env.networkBaseUrls,
  timeoutMs: env.NETWORK_TIMEOUT,
  ...(env.PROCESSING_CHECK_EVERY !== undefined || env.PROCESSING_MAX_WAIT !== undefined
    ? {
        processingWait: {
          ...(env.PROCESSING_CHECK_EVERY !== undefined ? { intervalMs: env.PROCESSING_CHECK_EVERY } : {}),
          ...(env.PROCESSING_MAX_WAIT !== undefined ? { maxWaitMs: env.PROCESSING_MAX_WAIT } : {}),
        },
      }
    : {}),
  ...(env.NETWORK_BLUESKY_VIDEO_URL ? { blueskyVideoUrl: env.NETWORK_BLUESKY_VIDEO_URL } : {}),
  ...(env.NETWORK_FACEBOOK_VIDEO_BASE_URL
    ? { facebookVideoBaseUrl: env.NETWORK_FACEBOOK_VIDEO_BASE_URL }
    : {}),
  // Facebook's Resumable Upload API opens sessions on the operator's app (OAUTH_FACEBOOK_CLIENT_ID).
  ...(env.oauthApps.facebook?.clientId ? { appIds: { facebook: env.oauthApps.facebook.clientId } } : {}),
  apiVersions: {
    linkedin: env.LINKEDIN_API_VERSION,
    facebook: env.META_GRAPH_API_VERSION,
    instagram: env.META_GRAPH_API_VERSION,
    threads: env.THREADS_API_VERSION,
  },
  media: {
    ownMedia: ownMediaSource(env.publicUrl, storage),
    allowPrivate: env.MEDIA_ALLOW_PRIVATE_URLS,
    timeoutMs: env.MEDIA_DOWNLOAD_TIMEOUT,
    videoTimeoutMs: env.MEDIA_VIDEO_DOWNLOAD_TIMEOUT,
    // One budget for the whole process: every connector's spooled videos count against it.
    spoolBudget: createSpoolBudget({ maxBytes: env.MEDIA_SPOOL_MAX, setting: 'MEDIA_SPOOL_MAX' }),
  },
});
const metrics = createPublisherMetrics(queues);

const publisher = await createPublisher({
  db,
  connection,
  queues,
  queuePrefix: env.QUEUE_PREFIX,
  connectors,
  logger,
  metrics,
  encryptionKey: env.encryptionKey,
  concurrency: env.PUBLISH_CONCURRENCY,
  backoffBaseMs: env.PUBLISH_BACKOFF_BASE,
  readbackSettleMs: env.READBACK_SETTLE,
  networkTimeoutMs: env.NETWORK_TIMEOUT,
  reconcileEveryMs: env.RECONCILE_EVERY,
  stuckAfterMs: env.RECONCILE_STUCK_AFTER,
  lockDurationMs: env.JOB_LOCK_DURATION,
  twitterAllowance: env.TWITTER_MONTHLY_ALLOWANCE,
  engagement: { collectAfterMs: env.METRICS_COLLECT_AFTER },
  metricsConcurrency: env.METRICS_CONCURRENCY,
  readBudget: {
    share: env.METRICS_READ_SHARE,
    tenantShare: env.METRICS_TENANT_SHARE,
    overrides: env.METRICS_READ_BUDGET,
  },
  mediaSweep: { storage, retentionMs: env.MEDIA_RETENTION },
  lanes: {
    networkShare: env.PUBLISH_NETWORK_SHARE,
    accountCap: env.PUBLISH_ACCOUNT_CONCURRENCY,
    leaseMs: env.PUBLISH_LANE_LEASE,
    retryMs: env.PUBLISH_LANE_RETRY,
    waitMs: env.PUBLISH_LANE_WAIT,
  },
  oauth: {
    apps: env.oauthApps,
    baseUrls: env.networkBaseUrls,
    apiVersions: { instagram: env.META_GRAPH_API_VERSION, threads: env.THREADS_API_VERSION },
    timeoutMs: env.NETWORK_TIMEOUT,
  },
});
await publisher
  .reconcileNow()
  .catch((err: Error) => logger.warn({ err: err.message }, 'initial reconcile failed'));
// Listening last: /healthz answers once the workers run.
const metricsServer = await startMetricsServer({
  port: env.METRICS_PORT,
  host: env.METRICS_HOST,
  registry: metrics.registry,
  logger,
});

// Worker first (finishes active jobs), then Redis, then PostgreSQL; /metrics stays up until the end.
stopOnSignals({
  logger,
  forceAfterMs: 30_000,
  steps: [
    { name: 'publisher', run: () => publisher.close() },
    { name: 'queues', run: () => queues.close() },
    { name: 'redis', run: () => connection.quit() },
    { name: 'postgres', run: () => db.$disconnect() },
    { name: 'metrics server', run: () => metricsServer.close() },
  ],
});
// Said last, after the signal handlers: whoever waits for this line may stop the process at once.
logger.info({ concurrency: env.PUBLISH_CONCURRENCY, metricsPort: metricsServer.port }, 'publisher started');
