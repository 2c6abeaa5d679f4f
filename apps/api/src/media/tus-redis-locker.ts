import { randomBytes } from 'node:crypto';
import type { TRedis } from '@sps/queue';
import { ERRORS, type Lock, type Locker, type RequestRelease } from '@tus/utils';

/** Deletes or extends the lock only while it is still ours (one key: safe on a Redis Cluster). */
const UNLOCK = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0";
const EXTEND =
  "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end return 0";

export interface TRedisLockerOptions {
  /** Key prefix (QUEUE_PREFIX): the locks of one deployment. */
  prefix: string;
  /** How long a request waits for the lock before it is answered 500 ERR_LOCK_TIMEOUT (tus default 30 s). */
  acquireTimeoutMs?: number;
  /**
   * A lock whose holder died (process killed) lapses after this (default 20 s, under the 30 s a waiting
   * request waits, so the request that finds it still gets it); the holder extends it while it lives.
   */
  ttlMs?: number;
  /** How often a waiting request retries, and a holder looks for a release request. */
  pollMs?: number;
}

/**
 * tus's Locker on Redis, so one upload's HEAD, PATCH and DELETE may reach any API instance: the lock is a key
 * `<prefix>:tus:lock:<upload id>` set with NX and a TTL to a random token (only its holder deletes or extends
 * it). As with tus's MemoryLocker, a request that finds the upload locked asks the holder to let go (a client
 * resuming after a dropped connection must not wait for the half-open one to time out): it sets
 * `<prefix>:tus:release:<upload id>` to the holder's token, which the holder polls and answers by cancelling
 * its request (tus then unlocks). Every command names one key, so this works on a Redis Cluster.
 */
export class RedisLocker implements Locker {
  readonly acquireTimeoutMs: number;
  readonly ttlMs: number;
  readonly pollMs: number;

  constructor(
    readonly redis: TRedis,
    readonly options: TRedisLockerOptions,
  ) {
    this.acquireTimeoutMs = options.acquireTimeoutMs ?? 30_000;
    this.ttlMs = options.ttlMs ?? 20_000;
    this.pollMs = options.pollMs ?? 200;
  }

  newLock(id: string): Lock {
    return new RedisLock(
      this,
      `${this.options.prefix}:tus:lock:${id}`,
      `${this.options.prefix}:tus:release:${id}`,
    );
  }
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

class RedisLock implements Lock {
  private readonly token = randomBytes(16).toString('hex');
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly locker: RedisLocker,
    private readonly key: string,
    private readonly releaseKey: string,
  ) {}

  async lock(signal: AbortSignal, requestRelease: RequestRelease): Promise<void> {
    const { redis, acquireTimeoutMs, ttlMs, pollMs } = this.locker;
    const deadline = Date.now() + acquireTimeoutMs;
    let asked: string | null = null;
    while (!signal.aborted && Date.now() < deadline) {
      if ((await redis.set(this.key, this.token, 'PX', ttlMs, 'NX')) === 'OK') {
        this.hold(requestRelease);
        return;
      }
      const holder = await redis.get(this.key);
      if (holder !== null && holder !== asked) {
        // Once per holder: ask it to cancel its request (it polls this key).
        await redis.set(this.releaseKey, holder, 'PX', ttlMs);
        asked = holder;
      }
      await sleep(pollMs, signal);
    }
    throw ERRORS.ERR_LOCK_TIMEOUT;
  }

  /** While held: extend the TTL, and cancel our request when another one asks for the lock. */
  private hold(requestRelease: RequestRelease) {
    const { redis, ttlMs, pollMs } = this.locker;
    let sinceExtend = 0;
    let released = false;
    const tick = async () => {
      sinceExtend += pollMs;
      if (sinceExtend >= ttlMs / 3) {
        sinceExtend = 0;
        await redis.eval(EXTEND, 1, this.key, this.token, String(ttlMs));
      }
      if (!released && (await redis.get(this.releaseKey)) === this.token) {
        released = true;
        await requestRelease();
      }
    };
    this.timer = setInterval(() => void tick().catch(() => undefined), pollMs);
    this.timer.unref();
  }

  async unlock(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.locker.redis.eval(UNLOCK, 1, this.key, this.token);
  }
}
