// The real API app (both variants, auth, validation, presenters) as the service runs it (apps/api/src/main.ts).
import { createDb } from '@sps/db';
import { createProducerConnection, createQueues } from '@sps/queue';
import { Redis } from 'ioredis';
import { createApi } from '../../apps/api/dist/app.js';
import { loadEnv } from '../../apps/api/dist/env.js';
import { createLogger } from '../../apps/api/dist/logger.js';

const logLevel = process.env.BENCH_API_LOG_LEVEL ?? 'silent';
const env = loadEnv({ ...process.env, LOG_LEVEL: logLevel });
const db = createDb(env.DATABASE_URL, { poolMax: env.DB_POOL_MAX });
const redis = createProducerConnection(env.REDIS_URL);
const queues = createQueues(redis, env.QUEUE_PREFIX);
const subscriber = new Redis(env.REDIS_URL, { maxRetriesPerRequest: null });
const { app, verifier } = createApi({ env, db, redis, queues, logger: createLogger(logLevel, 'bench') });
await verifier.listen(subscriber, env.QUEUE_PREFIX);
const server = app.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
server.keepAliveTimeout = 65_000;
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
