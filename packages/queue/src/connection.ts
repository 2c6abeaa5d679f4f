import { Redis, type RedisOptions } from 'ioredis';

/**
 * BullMQ prefix with a Redis Cluster hash tag, so every key of a queue lands in one slot
 * (`{sps}:publish:…`).
 */
export function bullPrefix(queuePrefix: string): string {
  return queuePrefix.startsWith('{') ? queuePrefix : `{${queuePrefix}}`;
}

/** Workers block on Redis and must retry forever (BullMQ requires `maxRetriesPerRequest: null`). */
export function createWorkerConnection(url: string, options: RedisOptions = {}): Redis {
  return new Redis(url, { maxRetriesPerRequest: null, enableReadyCheck: true, ...options });
}

/** Producers in the API fail fast when Redis is down, so a request answers 503 instead of hanging. */
export function createProducerConnection(url: string, options: RedisOptions = {}): Redis {
  return new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, ...options });
}
