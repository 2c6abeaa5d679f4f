import { createRedisFactory } from '@sps/queue/connection';
import type { TAdminEnv } from './env.js';

/**
 * Tells every API process to drop cached keys (the channel ApiKeyVerifier listens on). Best effort: if Redis
 * is unreachable, cached keys still expire after the API's cache TTL. Loaded only by commands that evict.
 * On a Redis Cluster a PUBLISH on any node reaches the subscribers of every node.
 */
export async function publishInvalidations(env: TAdminEnv, hashes: string[]): Promise<void> {
  const redis = createRedisFactory({ url: env.REDIS_URL, clusterNodes: env.REDIS_CLUSTER_NODES }).oneShot();
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    // One round trip for all of them (channels name no key, so a cluster sends them all to one node).
    const batch = redis.pipeline();
    for (const hash of hashes) batch.publish(`${env.QUEUE_PREFIX}:auth-invalidate`, hash);
    await batch.exec();
  } catch {
    // ignored, see above
  } finally {
    redis.disconnect();
  }
}
