import type { Server } from 'node:http';
import { DEVELOPMENT_KEY_WARNING, wantsPrettyLogs } from '@sps/core';
import { createDb, createIdempotencyRepository } from '@sps/db';
import { stopOnSignals } from '@sps/ops';
import { createQueues, createRedisFactory } from '@sps/queue';
import { createApi } from './app.js';
import { loadEnv } from './env.js';
import { sweepExpiredKeys } from './http/idempotency.js';
import { createLogger } from './logger.js';

const env = loadEnv();
const logger = createLogger(env.LOG_LEVEL, 'api', {
  pretty: wantsPrettyLogs(env, Boolean(process.stdout.isTTY)),
});
if (env.usesDevelopmentKey) {
  // Loud on purpose: also on stderr whatever LOG_LEVEL says.
  logger.warn(DEVELOPMENT_KEY_WARNING);
  process.stderr.write(`\n*** WARNING: ${DEVELOPMENT_KEY_WARNING} ***\n\n`);
}
const db = createDb(env.DATABASE_URL, { poolMax: env.DB_POOL_MAX });
// One Redis (REDIS_URL) or a Redis Cluster (REDIS_CLUSTER_NODES), for every connection below.
const redisFactory = createRedisFactory({ url: env.REDIS_URL, clusterNodes: env.REDIS_CLUSTER_NODES });
// Producers fail fast when Redis is down (the request answers 503) instead of queueing commands.
const redis = redisFactory.producer();
const queues = createQueues(redis, env.QUEUE_PREFIX);
// Named so an operator (or a test) can find it in CLIENT LIST: the key cache is emptied when it reconnects.
const subscriber = redisFactory.subscriber(`${env.QUEUE_PREFIX}-key-revocations`);
redis.on('error', (err) => logger.warn({ err: err.message }, 'redis error'));
subscriber.on('error', (err) => logger.warn({ err: err.message }, 'redis subscriber error'));

const { app, verifier, live } = createApi({ env, db, redis, queues, logger });
await verifier.listen(subscriber, env.QUEUE_PREFIX);
const stopSweep = sweepExpiredKeys(createIdempotencyRepository(db), logger);

const server: Server = app.listen(env.PORT, env.HOST, () => {
  logger.info({ port: env.PORT }, 'api listening');
});
server.keepAliveTimeout = 65_000;

/** Longest a request may still run after a stop signal: a Variant A publish waits up to PUBLISH_WAIT. */
const DRAIN_MS = env.PUBLISH_WAIT + 5_000;
/** Closing each of the queues, Redis and PostgreSQL after the drain. */
const CLOSE_MS = 5_000;

/** Resolves once every connection is gone; idle keep-alive sockets are closed as soon as they go idle. */
function drainServer(): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    // Node keeps a keep-alive socket that goes idle after close() open, so idle ones are swept until the end.
    const sweep = setInterval(() => server.closeIdleConnections(), 100);
    const deadline = setTimeout(() => {
      clearInterval(sweep);
      // A request still running after the bound (a stuck client, a long stream) is cut.
      server.closeAllConnections();
      resolve(false);
    }, DRAIN_MS);
    server.close(() => {
      clearInterval(sweep);
      clearTimeout(deadline);
      resolve(true);
    });
    server.closeIdleConnections();
  });
}

// Stop accepting, let in-flight requests finish (bounded), then close Redis, then PostgreSQL.
stopOnSignals({
  logger,
  forceAfterMs: DRAIN_MS + 3 * CLOSE_MS + 2_000,
  steps: [
    // Open dashboard streams never finish by themselves: ended first, so the drain below can complete.
    { name: 'dashboard streams', run: () => live.close(), timeoutMs: CLOSE_MS },
    {
      name: 'http server',
      run: async () => {
        if (!(await drainServer()))
          logger.warn({ drainMs: DRAIN_MS }, 'requests still running after the drain were cut');
      },
    },
    { name: 'queues', run: () => queues.close(), timeoutMs: CLOSE_MS },
    { name: 'redis', run: () => Promise.allSettled([redis.quit(), subscriber.quit()]), timeoutMs: CLOSE_MS },
    {
      name: 'postgres',
      run: () => {
        stopSweep();
        return db.$disconnect();
      },
      timeoutMs: CLOSE_MS,
    },
  ],
});
