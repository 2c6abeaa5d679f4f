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
 * A BullMQ job whose lane is full does not wait in its slot: the caller moves it back to delayed (see
 * `retryDelay`) and the slot takes the next job; no attempt is spent. A pool with `waitMs` (the preparing
 * publisher's, whose slots are the lanes themselves) instead queues the post in memory, first come first
 * served per network, until a place frees or `waitMs` passes (then it goes to BullMQ as above).
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
  waitMs: 15_000,
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
  mode: { wait: boolean } = { wait: false },
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
    const key = `${platform}:${socialAccountId ?? ''}`;
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
        give(platform);
        await account.release();
        accountQueues.get(`${platform}:${socialAccountId ?? ''}`)?.[0]?.();
      },
    };
  };
  return {
    networkLimit,
    async acquire(platform: TPlatform, socialAccountId: string | undefined): Promise<TLanePlace | null> {
      if (!enabled) return takeAccount(platform, socialAccountId);
      const deadline = Date.now() + (mode.wait ? options.waitMs : 0);
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
