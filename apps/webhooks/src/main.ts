import { DEVELOPMENT_KEY_WARNING, wantsPrettyLogs } from '@sps/core';
import { createDb, pingDb } from '@sps/db';
import { logOptions, startMetricsServer, stopOnSignals } from '@sps/ops';
import { createQueues, createRedisFactory } from '@sps/queue';
import { pino } from 'pino';
import pretty from 'pino-pretty';
import { loadEnv } from './env.js';
import { createMailer } from './mailer.js';
import { createWebhooksMetrics } from './metrics.js';
import { createWebhooksWorker } from './webhooks.js';

// Receivers with a self-signed or private CA are trusted through Node's NODE_EXTRA_CA_CERTS (read at start-up).
const env = loadEnv();
// JSON lines in production; pino-pretty in development on a terminal or with LOG_PRETTY=true.
// Redaction, and errors logged as message and code only (never a failed request's options and headers).
const options = logOptions('webhooks', env.LOG_LEVEL);
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
const metrics = createWebhooksMetrics(queues);

if (!(await pingDb(db))) logger.warn('PostgreSQL is not answering yet');
const webhooks = await createWebhooksWorker({
  db,
  connection,
  queues,
  queuePrefix: env.QUEUE_PREFIX,
  logger,
  metrics,
  mailer: createMailer({ smtpUrl: env.SMTP_URL, from: env.SMTP_FROM, logger }),
  options: {
    encryptionKey: env.encryptionKey,
    retryDelaysMs: env.WEBHOOK_RETRY_DELAYS,
    timeoutMs: env.WEBHOOK_TIMEOUT,
    allowPrivateUrls: env.WEBHOOK_ALLOW_PRIVATE_URLS,
    deactivateAfter: 10,
    concurrency: env.WEBHOOK_CONCURRENCY,
    ...(env.WEBHOOK_ACCOUNT_CONCURRENCY ? { perAccountConcurrency: env.WEBHOOK_ACCOUNT_CONCURRENCY } : {}),
    ...(env.WEBHOOK_ENDPOINT_CONCURRENCY ? { perWebhookConcurrency: env.WEBHOOK_ENDPOINT_CONCURRENCY } : {}),
  },
  dispatchEveryMs: env.WEBHOOK_DISPATCH_EVERY,
  reconcileEveryMs: env.WEBHOOK_RECONCILE_EVERY,
  lockDurationMs: env.WEBHOOK_LOCK_DURATION,
});
await webhooks
  .reconcileNow()
  .catch((err: Error) => logger.warn({ err: err.message }, 'initial reconcile failed'));
// Listening last: /healthz answers once the worker runs.
const metricsServer = await startMetricsServer({
  port: env.METRICS_PORT,
  host: env.METRICS_HOST,
  registry: metrics.registry,
  logger,
});

// Worker first (finishes in-flight deliveries), then Redis, then PostgreSQL; /metrics stays up until the end.
stopOnSignals({
  logger,
  forceAfterMs: env.WEBHOOK_TIMEOUT + 10_000,
  steps: [
    { name: 'webhooks', run: () => webhooks.close() },
    { name: 'queues', run: () => queues.close() },
    { name: 'redis', run: () => connection.quit() },
    { name: 'postgres', run: () => db.$disconnect() },
    { name: 'metrics server', run: () => metricsServer.close() },
  ],
});
// Said last, after the signal handlers: whoever waits for this line may stop the process at once.
logger.info(
  {
    concurrency: env.WEBHOOK_CONCURRENCY,
    metricsPort: metricsServer.port,
    retries: env.WEBHOOK_RETRY_DELAYS.length,
    smtp: Boolean(env.SMTP_URL),
  },
  'webhooks started',
);
