import { randomUUID } from 'node:crypto';
import { redisScript, type TRedis } from '@sps/queue';

// Compare-and-delete: only the holder (its random value) releases the lock.
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

/**
 * A per-account lock in Redis (one key, so it works on a cluster). `lockMs` must outlive `workMs`: a lock
 * that lapsed while its work still ran would let a second holder in.
 */
export function createAccountLock(
  redis: TRedis,
  options: { prefix: string; lockMs: number; lockWaitMs: number; workMs: number },
) {
  const { prefix, lockMs, lockWaitMs, workMs } = options;
  const release = redisScript(redis, RELEASE);
  /**
   * Runs `work` while holding the account's lock. `work` gets a signal that aborts `workMs` after the lock
   * was taken, well before the lock (`lockMs`) lapses.
   */
  return async function withLock<T>(
    socialAccountId: string,
    work: (signal: AbortSignal) => Promise<T>,
  ): Promise<T | null> {
    const key = `${prefix}:token-lock:${socialAccountId}`;
    const holder = randomUUID();
    const deadline = Date.now() + lockWaitMs;
    for (let wait = 25; ; wait = Math.min(wait * 2, 500)) {
      if ((await redis.set(key, holder, 'PX', lockMs, 'NX')) === 'OK') break;
      if (Date.now() >= deadline) return null;
      await new Promise((r) => setTimeout(r, wait));
    }
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), workMs);
    try {
      return await work(controller.signal);
    } finally {
      clearTimeout(timer);
      await release(key, holder).catch(() => undefined);
    }
  };
}
