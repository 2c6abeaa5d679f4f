// The real API app (both variants, auth, validation, presenters) as the service runs it (apps/api/src/main.ts).
import { createDb } from '@sps/db';
import { createQueues, createRedisFactory } from '@sps/queue';
import { createApi } from '../../apps/api/dist/app.js';
import { loadEnv } from '../../apps/api/dist/env.js';
import { createLogger } from '../../apps/api/dist/logger.js';

const logLevel = process.env.BENCH_API_LOG_LEVEL ?? 'silent';
const env = loadEnv({ ...process.env, LOG_LEVEL: logLevel });
const db = createDb(env.DATABASE_URL, { poolMax: env.DB_POOL_MAX });
// REDIS_URL, or the Redis Cluster of REDIS_CLUSTER_NODES, as apps/api/src/main.ts.
const redisFactory = createRedisFactory({ url: env.REDIS_URL, clusterNodes: env.REDIS_CLUSTER_NODES });
const redis = redisFactory.producer();
const queues = createQueues(redis, env.QUEUE_PREFIX);
const subscriber = redisFactory.subscriber();
const { app, verifier } = createApi({ env, db, redis, queues, logger: createLogger(logLevel, 'bench') });
await verifier.listen(subscriber, env.QUEUE_PREFIX);
const server = app.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
server.keepAliveTimeout = 65_000;
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
