import type { Server } from 'node:http';
import { createDb } from '@sps/db';
import { createProducerConnection, createQueues } from '@sps/queue';
import { Redis } from 'ioredis';
import { createApi } from './app.js';
import { loadEnv } from './env.js';
import { createLogger } from './logger.js';

const env = loadEnv();
const logger = createLogger(env.LOG_LEVEL, 'api');
const db = createDb(env.DATABASE_URL, { poolMax: env.DB_POOL_MAX });
// Producers fail fast when Redis is down (the request answers 503) instead of queueing commands.
const redis = createProducerConnection(env.REDIS_URL);
const queues = createQueues(redis, env.QUEUE_PREFIX);
const subscriber = new Redis(env.REDIS_URL, { maxRetriesPerRequest: null });
redis.on('error', (err) => logger.warn({ err: err.message }, 'redis error'));
subscriber.on('error', (err) => logger.warn({ err: err.message }, 'redis subscriber error'));

const { app, verifier } = createApi({ env, db, redis, queues, logger });
await verifier.listen(subscriber, env.QUEUE_PREFIX);

const server: Server = app.listen(env.PORT, env.HOST, () => {
  logger.info({ port: env.PORT }, 'api listening');
});
server.keepAliveTimeout = 65_000;

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'shutting down');
  const force = setTimeout(() => process.exit(1), 10_000);
  force.unref();
  // Stop accepting, let in-flight requests finish, then close Redis, then PostgreSQL.
  await new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  await queues.close().catch(() => undefined);
  await Promise.allSettled([redis.quit(), subscriber.quit()]);
  await db.$disconnect();
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
