import { randomUUID } from 'node:crypto';
import type { TPlatform } from '@sps/core';
import type { TRedis } from '@sps/queue';

/**
 * Fair lanes (issue 24): before a network of a post is published, the post takes a place in two lanes.
 *
 * - The network's lane, in this process: each network has `networkShare` of the slot pool the job runs in
 *   (the BullMQ worker's PUBLISH_CONCURRENCY, or the prepared posts' in-process slots) and may borrow idle
 *   slots beyond it only while a share's worth stays free, so a network that answers in 30 s or times
 *   out always leaves at least one share of the slots to the others.
 *   Slots belong to a process, so the share is counted in the process: it needs no Redis round trip, grows
 *   with the publishers, and dies with a killed process (nothing to leak).
 * - The account's lane, in Redis (one sorted set per connected account, so a single-key script: safe on a
 *   Redis Cluster): at most `accountCap` publishes of one connected account at once, over every publisher
 *   process, so one tenant's 1,000 posts cannot take every slot. Each place is a lease (member = holder,
 *   score = expiry) renewed while the publish runs; a killed process stops renewing and its places lapse
 *   after `leaseMs`, dropped by the next acquire.
 *
 * A job whose lane is full does not wait in its slot: the caller moves it back to delayed (see
 * `retryDelay`) and the slot takes the next job; no attempt is spent.
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

export interface TLaneOptions {
  /** Share of a slot pool one network may hold at once (0 < share <= 1). */
  networkShare: number;
  /** Publishes of one connected account at once, over all publishers (0: no account lane). */
  accountCap: number;
  /** Lifetime of an account place without renewal: how soon a killed publisher's places come back. */
  leaseMs: number;
  /** The shortest wait of a job whose lane is full before it is tried again (see `retryDelay`). */
  retryMs: number;
}

export const DEFAULT_LANES: TLaneOptions = {
  networkShare: 0.25,
  accountCap: 25,
  leaseMs: 30_000,
  retryMs: 200,
};

/** A place taken in both lanes; `release` gives both back (idempotent). */
export interface TLanePlace {
  release(): Promise<void>;
}

/** Thrown when a post's networks all wait for a lane: the job comes back after `delayMs`, not an attempt. */
export class LaneFullError extends Error {
  constructor(
    message: string,
    readonly delayMs: number,
  ) {
    super(message);
    this.name = 'LaneFullError';
  }
}

/** The account lanes in Redis, shared by every slot pool of the process. */
export function createAccountLanes(redis: TRedis, prefix: string, options: TLaneOptions) {
  const { accountCap, leaseMs } = options;
  const keyOf = (platform: TPlatform, socialAccountId: string) =>
    `${prefix}:lane:${platform}:${socialAccountId}`;
  return {
    /** A place for the account, renewed every third of the lease until released; null when full. */
    async acquire(platform: TPlatform, socialAccountId: string): Promise<TLanePlace | null> {
      if (accountCap <= 0) return { release: async () => undefined };
      const key = keyOf(platform, socialAccountId);
      const holder = randomUUID();
      const got = await redis.eval(ACQUIRE, 1, key, accountCap, leaseMs, holder);
      if (Number(got) !== 1) return null;
      const renew = setInterval(
        () => void redis.eval(RENEW, 1, key, leaseMs, holder).catch(() => undefined),
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

/**
 * The lanes of one slot pool: the network's share of `poolSize` in memory (plus idle slots it may borrow),
 * then the account's place in Redis. `acquire` answers null when either is full (nothing is held then).
 */
export function createPublishLanes(poolSize: number, options: TLaneOptions, accounts: TAccountLanes | null) {
  const networkLimit = Math.max(1, Math.floor(options.networkShare * poolSize));
  const running = new Map<TPlatform, number>();
  let total = 0;
  const give = (platform: TPlatform) => {
    running.set(platform, (running.get(platform) ?? 1) - 1);
    total -= 1;
  };
  /**
   * A network always has its share; beyond it, it borrows idle slots as long as a share's worth stays free
   * for the other networks. So one busy network alone (1,000 X posts due at once) is not held to a quarter
   * of the slots, while a slow one can never leave the others fewer than `networkLimit` slots.
   */
  const takeAccount = async (platform: TPlatform, socialAccountId: string | undefined) =>
    accounts && socialAccountId
      ? accounts.acquire(platform, socialAccountId)
      : { release: async () => undefined };
  const hasRoom = (platform: TPlatform) =>
    (running.get(platform) ?? 0) < networkLimit || total + 1 <= poolSize - networkLimit;
  return {
    networkLimit,
    async acquire(platform: TPlatform, socialAccountId: string | undefined): Promise<TLanePlace | null> {
      if (networkLimit >= poolSize) return takeAccount(platform, socialAccountId);
      if (!hasRoom(platform)) return null;
      running.set(platform, (running.get(platform) ?? 0) + 1);
      total += 1;
      let place: TLanePlace | null;
      try {
        place = await takeAccount(platform, socialAccountId);
      } catch (error) {
        give(platform);
        throw error;
      }
      if (!place) {
        give(platform);
        return null;
      }
      let released = false;
      const account = place;
      return {
        async release() {
          if (released) return;
          released = true;
          give(platform);
          await account.release();
        },
      };
    },
    /** Publishes running per network in this pool (tests). */
    running: (platform: TPlatform) => running.get(platform) ?? 0,
    /**
     * The wait before a job whose lanes were full is tried again: a quarter of how long it has waited so far,
     * from `retryMs` up to ten times that, ±25 % so they spread. A fresh job comes back soon; one behind a
     * slow network's long lane turns over less often, so hundreds of them do not keep Redis busy.
     */
    retryDelay: (waitedMs = 0) =>
      Math.round(
        Math.min(Math.max(options.retryMs, waitedMs / 4), options.retryMs * 10) * (0.75 + Math.random() / 2),
      ),
  };
}
export type TPublishLanes = ReturnType<typeof createPublishLanes>;
