import { randomUUID } from 'node:crypto';
import type { TPlatform } from '@sps/core';
import { redisScript, type TRedis } from '@sps/queue';
import type { TLaneOptions, TLanePlace } from './publish-lanes.js';

/**
 * The account's lane (issue 24, see publish-lanes.ts), in Redis: one sorted set per connected account, so a
 * single-key script (safe on a Redis Cluster). Each place is a lease (member = holder, score = expiry)
 * renewed while the publish runs; a killed process stops renewing and its places lapse after `leaseMs`,
 * dropped by the next acquire.
 */

// Expired places out, then a place if the set has room. Redis's clock, so publishers' clocks may differ.
const ACQUIRE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;
// A renewal puts the place back even if it lapsed meanwhile (a stalled event loop): its publish still runs.
const RENEW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[1]), ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1`;

/** The account lanes in Redis, shared by every slot pool of the process. */
export function createAccountLanes(redis: TRedis, prefix: string, options: TLaneOptions) {
  const { accountCap, leaseMs } = options;
  const acquireScript = redisScript(redis, ACQUIRE);
  const renewScript = redisScript(redis, RENEW);
  const keyOf = (platform: TPlatform, socialAccountId: string) =>
    `${prefix}:lane:${platform}:${socialAccountId}`;
  return {
    /** A place for the account, renewed every third of the lease until released; null when full. */
    async acquire(platform: TPlatform, socialAccountId: string): Promise<TLanePlace | null> {
      if (accountCap <= 0) return { release: async () => undefined };
      const key = keyOf(platform, socialAccountId);
      const holder = randomUUID();
      const got = await acquireScript(key, accountCap, leaseMs, holder);
      if (Number(got) !== 1) return null;
      const renew = setInterval(
        () => void renewScript(key, leaseMs, holder).catch(() => undefined),
        Math.max(10, Math.floor(leaseMs / 3)),
      );
      renew.unref();
      let released = false;
      return {
        async release() {
          if (released) return;
          released = true;
          clearInterval(renew);
          await redis.zrem(key, holder).catch(() => undefined);
        },
      };
    },
    /** Places held now (tests, operators): expired ones not counted. */
    async held(platform: TPlatform, socialAccountId: string): Promise<number> {
      return redis.zcount(keyOf(platform, socialAccountId), Date.now(), '+inf');
    },
  };
}
export type TAccountLanes = ReturnType<typeof createAccountLanes>;
