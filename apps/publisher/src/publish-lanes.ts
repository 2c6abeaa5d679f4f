import type { TPlatform } from '@sps/core';
import type { TAccountLanes } from './account-lanes.js';

export { createAccountLanes, type TAccountLanes } from './account-lanes.js';

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
 * A BullMQ job whose lane is full does not wait in its slot for long: unless its lane is flowing (places
 * coming back often enough that one is expected within `retryMs`, see `flowing`), the caller moves it back to
 * delayed (see `retryDelay`) and the slot takes the next job; no attempt is spent. A flowing lane's job waits
 * up to `retryMs` in memory: turning it back would cost a re-read, two Redis scripts and a fetch for a place
 * that frees a few milliseconds later (measured: a single busy network spent more on turning its jobs back
 * than on publishing them). A slow network's lane is never flowing, so its jobs still leave their slots at
 * once. A pool with `wait: true` (the preparing publisher's, whose slots are the lanes themselves) instead
 * queues the post in memory, first come first served per network, until a place frees or `waitMs` passes
 * (then it goes to BullMQ as above).
 */

export interface TLaneOptions {
  /** Share of a slot pool one network may hold at once (0 < share <= 1). */
  networkShare: number;
  /** Publishes of one connected account at once, over all publishers (0: no account lane). */
  accountCap: number;
  /** Lifetime of an account place without renewal: how soon a killed publisher's places come back. */
  leaseMs: number;
  /** The shortest wait of a job whose lane is full before it is tried again (see `retryDelay`). */
  retryMs: number;
  /**
   * How long a post of a waiting pool (the prepared posts') waits in memory for its lanes before it is
   * handed to a delayed BullMQ job instead.
   */
  waitMs: number;
}

export const DEFAULT_LANES: TLaneOptions = {
  networkShare: 0.25,
  accountCap: 25,
  leaseMs: 30_000,
  retryMs: 200,
  waitMs: 60_000,
};

/** What a slot pool's lanes hold now (the `publish_lane_*` gauges). */
export interface TLaneSnapshot {
  /** Places held per network (a network with none may be missing). */
  running: Partial<Record<TPlatform, number>>;
  /** Posts waiting for a network or account place (waiting pools only). */
  waiting: number;
  /** The network share of the pool, in slots. */
  networkLimit: number;
}

/** A place taken in both lanes; `release` gives both back (idempotent). */
export interface TLanePlace {
  release(): Promise<void>;
}

/** Thrown when a post's networks all wait for a lane: the job comes back after `delayMs`, not an attempt. */
export class LaneFullError extends Error {
  constructor(
    message: string,
    readonly delayMs: number,
    /** The networks whose lane was full. */
    readonly platforms: readonly TPlatform[] = [],
  ) {
    super(message);
    this.name = 'LaneFullError';
  }
}

/** An account lane's key in this pool's maps (its waiters, its returns). */
const accountKey = (platform: TPlatform, socialAccountId: string | undefined) =>
  `${platform}:${socialAccountId ?? ''}`;

/** A post waiting in memory for a network's place: `grant(true)` hands it a place already counted. */
interface TWaiter {
  grant(granted: boolean): void;
}

/**
 * The lanes of one slot pool: the network's share of `poolSize` in memory (plus idle slots it may borrow),
 * then the account's place in Redis. `acquire` answers null when either is full (nothing is held then);
 * in a pool made with `wait: true` it first waits, up to `options.waitMs`, in the network's FIFO (woken
 * when a place of the pool frees) and polls a full account lane every `retryMs` (holding no network place
 * meanwhile). `close` ends every wait with null, so the caller hands those posts back durably.
 */
export function createPublishLanes(
  poolSize: number,
  options: TLaneOptions,
  accounts: TAccountLanes | null,
  mode: {
    /**
     * true: wait up to `waitMs` for a place; 'flowing': up to `retryMs`, only while the lane is flowing;
     * false: never.
     */
    wait: boolean | 'flowing';
    /**
     * A place of `platform` was given back by a publish that held it (not by a failed acquire) and no post
     * waiting here took it.
     */
    onFree?: (platform: TPlatform) => void;
  } = { wait: false },
) {
  const networkLimit = Math.max(1, Math.floor(options.networkShare * poolSize));
  const enabled = networkLimit < poolSize;
  const running = new Map<TPlatform, number>();
  const queues = new Map<TPlatform, TWaiter[]>();
  const roomWaiters: (() => void)[] = [];
  let total = 0;
  let waiting = 0;
  let closed = false;
  /**
   * A network always has its share; beyond it, it borrows idle slots as long as a share's worth stays free
   * for the other networks. So one busy network alone (1,000 X posts due at once) is not held to a quarter
   * of the slots, while a slow one can never leave the others fewer than `networkLimit` slots. The share
   * applies to waiters too: a woken waiter takes only a place its network has room for.
   */
  const hasRoom = (platform: TPlatform) =>
    (running.get(platform) ?? 0) < networkLimit || total + 1 <= poolSize - networkLimit;
  const take = (platform: TPlatform) => {
    running.set(platform, (running.get(platform) ?? 0) + 1);
    total += 1;
  };
  const setWaiting = (delta: number) => {
    waiting += delta;
    if (delta < 0) for (const go of roomWaiters.splice(0)) go();
  };
  /** Freed places go to the networks' oldest waiters, one network after another, while each has room. */
  const pump = () => {
    let granted = true;
    while (granted) {
      granted = false;
      for (const [platform, queue] of queues) {
        if (queue.length === 0 || !hasRoom(platform)) continue;
        take(platform);
        queue.shift()?.grant(true);
        granted = true;
      }
    }
  };
  /** When a place of each lane (network, or `network:account`) last came back, and the mean gap between. */
  const returns = new Map<string, { last: number; gap: number }>();
  const returned = (key: string) => {
    const now = performance.now();
    const seen = returns.get(key);
    if (!seen) {
      // Bounded: lanes not seen for a while are dropped with the rest when too many accounts passed by.
      if (returns.size >= 10_000) returns.clear();
      returns.set(key, { last: now, gap: Number.POSITIVE_INFINITY });
      return;
    }
    const gap = now - seen.last;
    seen.gap = Number.isFinite(seen.gap) ? seen.gap * 0.8 + gap * 0.2 : gap;
    seen.last = now;
  };
  /**
   * Whether a post that would be `ahead + 1`th in line for `key` can expect its place within `retryMs`:
   * places came back in the last `retryMs` and, at the mean gap between them, often enough.
   */
  const flowing = (key: string, ahead: number) => {
    const seen = returns.get(key);
    if (!seen) return false;
    const now = performance.now();
    return now - seen.last < options.retryMs && (ahead + 1) * seen.gap < options.retryMs;
  };
  const give = (platform: TPlatform) => {
    running.set(platform, (running.get(platform) ?? 1) - 1);
    total -= 1;
    pump();
  };
  /** A network place, at once or (waiting pool) after the older waiters of its network; false: none. */
  const networkPlace = (platform: TPlatform, deadline: number): Promise<boolean> | boolean => {
    const queue = queues.get(platform) ?? [];
    if (queue.length === 0 && hasRoom(platform)) {
      take(platform);
      return true;
    }
    const left = deadline - Date.now();
    if (!mode.wait || closed || left <= 0) return false;
    if (mode.wait === 'flowing' && !flowing(platform, queue.length)) return false;
    queues.set(platform, queue);
    setWaiting(1);
    return new Promise<boolean>((resolve) => {
      const waiter: TWaiter = {
        grant(granted) {
          clearTimeout(timer);
          const at = queue.indexOf(waiter);
          if (at >= 0) queue.splice(at, 1);
          setWaiting(-1);
          resolve(granted);
        },
      };
      const timer = setTimeout(() => waiter.grant(false), left);
      queue.push(waiter);
      // Room may have come while older waiters were being served: never leave a waiter behind it.
      pump();
    });
  };
  const takeAccount = async (platform: TPlatform, socialAccountId: string | undefined) =>
    accounts && socialAccountId
      ? accounts.acquire(platform, socialAccountId)
      : { release: async () => undefined };
  /** Per account of this pool, the oldest waiter first: woken when this pool gives a place back. */
  const accountQueues = new Map<string, (() => void)[]>();
  /**
   * A full account lane, tried again when this pool gives one of its places back (the oldest waiter of the
   * account first) and otherwise polled in Redis (another process may free it), less often the longer it
   * waits (up to 10 × `retryMs`), so a tenant's thousand posts on one account do not keep Redis busy.
   */
  const waitAccount = async (platform: TPlatform, socialAccountId: string | undefined, deadline: number) => {
    const key = accountKey(platform, socialAccountId);
    setWaiting(1);
    try {
      for (let turn = 1; ; turn += 1) {
        const left = deadline - Date.now();
        if (closed || left <= 0) return null;
        const every = Math.min(options.retryMs * turn, options.retryMs * 10);
        const pause = Math.min(left, Math.round(every * (0.75 + Math.random() / 2)));
        const queue = accountQueues.get(key) ?? [];
        accountQueues.set(key, queue);
        await new Promise<void>((go) => {
          const wake = () => {
            clearTimeout(timer);
            const at = queue.indexOf(wake);
            if (at >= 0) queue.splice(at, 1);
            go();
          };
          const timer = setTimeout(wake, pause);
          queue.push(wake);
        });
        if (closed) return null;
        const place = await takeAccount(platform, socialAccountId);
        if (place) return place;
      }
    } finally {
      setWaiting(-1);
      if (accountQueues.get(key)?.length === 0) accountQueues.delete(key);
    }
  };
  const placeOf = (platform: TPlatform, socialAccountId: string | undefined, account: TLanePlace) => {
    let released = false;
    return {
      async release() {
        if (released) return;
        released = true;
        const key = accountKey(platform, socialAccountId);
        returned(platform);
        returned(key);
        give(platform);
        // A post waiting here took the place: promoting a turned-back job would only turn it back again.
        if (hasRoom(platform)) mode.onFree?.(platform);
        await account.release();
        accountQueues.get(key)?.[0]?.();
      },
    };
  };
  return {
    networkLimit,
    async acquire(platform: TPlatform, socialAccountId: string | undefined): Promise<TLanePlace | null> {
      if (!enabled) return takeAccount(platform, socialAccountId);
      const deadline =
        Date.now() + (mode.wait === true ? options.waitMs : mode.wait === 'flowing' ? options.retryMs : 0);
      let account: TLanePlace | null = null;
      for (;;) {
        if (!(await networkPlace(platform, deadline))) {
          await account?.release();
          return null;
        }
        if (account) return placeOf(platform, socialAccountId, account);
        try {
          account = await takeAccount(platform, socialAccountId);
        } catch (error) {
          give(platform);
          throw error;
        }
        if (account) return placeOf(platform, socialAccountId, account);
        give(platform);
        if (!mode.wait) return null;
        const key = accountKey(platform, socialAccountId);
        if (mode.wait === 'flowing' && !flowing(key, accountQueues.get(key)?.length ?? 0)) return null;
        // The account is full: wait for it without a network place, then queue for one again.
        account = await waitAccount(platform, socialAccountId, deadline);
        if (!account) return null;
      }
    },
    /** Whether this pool's network lanes apply (a share below the whole pool). */
    enabled,
    /** Publishes running per network in this pool (tests). */
    running: (platform: TPlatform) => running.get(platform) ?? 0,
    /** Posts waiting for a place in this pool (network or account). */
    waiting: () => waiting,
    /** Places held per network and posts waiting, read when /metrics is scraped. */
    snapshot: (): TLaneSnapshot => ({
      running: Object.fromEntries(running),
      waiting,
      networkLimit,
    }),
    /** Resolves once at most `roomAt` posts wait here: a producer holds back meanwhile. */
    async room(roomAt: number): Promise<void> {
      while (waiting > roomAt && !closed) await new Promise<void>((go) => roomWaiters.push(go));
    },
    /** Ends every wait with null (the callers hand their posts to BullMQ) and waits no more. */
    close() {
      closed = true;
      for (const queue of queues.values()) for (const waiter of [...queue]) waiter.grant(false);
      for (const go of roomWaiters.splice(0)) go();
      for (const queue of accountQueues.values()) for (const wake of [...queue]) wake();
    },
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
