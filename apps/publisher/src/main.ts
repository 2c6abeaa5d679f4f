import { createDb } from '@sps/db';
import { createConnectors } from '@sps/networks';
import { createQueues, createWorkerConnection } from '@sps/queue';
import { pino } from 'pino';
import { loadEnv } from './env.js';
import { createPublisher } from './publisher.js';

const env = loadEnv();
const logger = pino({ name: 'publisher', level: env.LOG_LEVEL });
const db = createDb(env.DATABASE_URL, { poolMax: env.DB_POOL_MAX });
const connection = createWorkerConnection(env.REDIS_URL);
connection.on('error', (err) => logger.warn({ err: err.message }, 'redis error'));
const queues = createQueues(connection, env.QUEUE_PREFIX);
const connectors = createConnectors({ baseUrls: env.networkBaseUrls, timeoutMs: env.NETWORK_TIMEOUT });

const publisher = await createPublisher({
  db,
  connection,
  queues,
  queuePrefix: env.QUEUE_PREFIX,
  connectors,
  logger,
  encryptionKey: env.encryptionKey,
  concurrency: env.PUBLISH_CONCURRENCY,
  backoffBaseMs: env.PUBLISH_BACKOFF_BASE,
  reconcileEveryMs: env.RECONCILE_EVERY,
  stuckAfterMs: env.RECONCILE_STUCK_AFTER,
  lockDurationMs: env.JOB_LOCK_DURATION,
});
await publisher
  .reconcileNow()
  .catch((err: Error) => logger.warn({ err: err.message }, 'initial reconcile failed'));
logger.info({ concurrency: env.PUBLISH_CONCURRENCY }, 'publisher started');

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'publisher shutting down');
  const force = setTimeout(() => process.exit(1), 30_000);
  force.unref();
  // Worker first (finishes active jobs), then Redis, then PostgreSQL.
  await publisher.close();
  await queues.close();
  await connection.quit().catch(() => undefined);
  await db.$disconnect();
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
