import { Redis } from 'ioredis';
import type { TAdminEnv } from './env.js';

/**
 * Tells every API process to drop cached keys (the channel ApiKeyVerifier listens on). Best effort: if Redis
 * is unreachable, cached keys still expire after the API's cache TTL. Loaded only by commands that evict.
 */
export async function publishInvalidations(env: TAdminEnv, hashes: string[]): Promise<void> {
  const redis = new Redis(env.REDIS_URL, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    connectTimeout: 2000,
    retryStrategy: () => null,
    // No INFO round trip before the first command: one PUBLISH batch is all this connection does.
    enableReadyCheck: false,
  });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    // One round trip for all of them.
    const batch = redis.pipeline();
    for (const hash of hashes) batch.publish(`${env.QUEUE_PREFIX}:auth-invalidate`, hash);
    await batch.exec();
  } catch {
    // ignored, see above
  } finally {
    redis.disconnect();
  }
}
