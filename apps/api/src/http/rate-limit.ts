import { AppError } from '@sps/core';
import type { TPlan } from '@sps/db';
import type { TRedis } from '@sps/queue';
import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { TApiEnv } from '../env.js';
import { type TTierB, tierOf } from '../limits-config.js';
import { authOf } from './auth.js';
import { clientKey } from './client-address.js';

const MINUTE = 60;
const HOUR = 3600;
/** How often a Redis outage is logged while requests fall back to the per-process counters. */
const WARN_EVERY_MS = 30_000;

export interface TWindowResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Milliseconds until the window's counter expires. */
  msBeforeNext: number;
}

/**
 * One fixed-window counter. It lives in Redis so every API process behind a load balancer shares it; when
 * Redis is unreachable the request is counted in this process instead (fail-open to per-process limits
 * with a throttled warning): an outage of the cache must neither stop the API nor remove every limit.
 */
export class WindowLimiter {
  private readonly store: RateLimiterRedis;
  private readonly fallback: RateLimiterMemory;
  private lastWarnAt = 0;

  constructor(
    redis: TRedis,
    readonly keyPrefix: string,
    readonly limit: number,
    durationSec: number,
    private readonly logger: Logger,
  ) {
    this.store = new RateLimiterRedis({
      storeClient: redis,
      keyPrefix,
      points: limit,
      duration: durationSec,
      // Answer from the fallback at once instead of queueing behind a reconnecting client.
      rejectIfRedisNotReady: true,
    });
    this.fallback = new RateLimiterMemory({ keyPrefix, points: limit, duration: durationSec });
  }

  /** The window's state without counting (null when the key has no count); per process while Redis is down. */
  async peek(key: string): Promise<TWindowResult | null> {
    let res: RateLimiterRes | null;
    try {
      res = await this.store.get(key);
    } catch (error) {
      this.warn(error);
      res = await this.fallback.get(key);
    }
    // `get` reports consumed points; the window is used up once they pass the limit.
    return res ? this.result(res.consumedPoints < this.limit, res) : null;
  }

  async consume(key: string): Promise<TWindowResult> {
    try {
      return this.result(true, await this.store.consume(key));
    } catch (error) {
      if (error instanceof RateLimiterRes) return this.result(false, error);
      this.warn(error);
    }
    try {
      return this.result(true, await this.fallback.consume(key));
    } catch (error) {
      if (error instanceof RateLimiterRes) return this.result(false, error);
      throw error;
    }
  }

  /**
   * What is left in the current window, without counting anything (the dashboard's usage page). A key with
   * no counter yet has its whole limit; when Redis is unreachable the per-process fallback is read.
   */
  async usage(key: string): Promise<TWindowResult> {
    return (await this.peek(key)) ?? this.full();
  }

  private full(): TWindowResult {
    return { allowed: true, limit: this.limit, remaining: this.limit, msBeforeNext: 0 };
  }

  private result(allowed: boolean, res: RateLimiterRes): TWindowResult {
    return {
      allowed,
      limit: this.limit,
      remaining: Math.max(0, res.remainingPoints),
      msBeforeNext: Math.max(0, res.msBeforeNext),
    };
  }

  private warn(error: unknown): void {
    const now = Date.now();
    if (now - this.lastWarnAt < WARN_EVERY_MS) return;
    this.lastWarnAt = now;
    this.logger.warn(
      { err: (error as Error).message, keyPrefix: this.keyPrefix },
      'rate limiter cannot reach Redis; counting per process until it is back',
    );
  }
}

/** Whole seconds until the window resets; at least 1 so a client never retries at once. */
export function retryAfterSeconds(result: TWindowResult): number {
  return Math.max(1, Math.ceil(result.msBeforeNext / 1000));
}

/** The window's end as unix seconds (`X-RateLimit-Reset`). */
export function resetUnixSeconds(result: TWindowResult, now = Date.now()): number {
  return Math.ceil((now + result.msBeforeNext) / 1000);
}

export interface TRateLimits {
  /**
   * Variant A, every request per client address (IPv6 by /64) and minute; runs before authentication so key
   * guessing is limited too. `req.ip` honours X-Forwarded-For only as far as TRUST_PROXY says.
   */
  perIpA: RequestHandler;
  /** Variant A, publishing requests per client address and hour; runs after body parsing (create/update read `published`). */
  publishA: RequestHandler;
  /** Variant B, per API key by the account's tier; runs right after authentication, before the body is read. */
  perKeyB: RequestHandler;
  /**
   * Variant B: what a key has left this minute and this publish hour, read from the same counters without
   * consuming; null when RATE_LIMITS=off.
   */
  peekB(plan: TPlan, keyId: string): Promise<{ minute: TWindowResult; publish: TWindowResult } | null>;
}

export interface TRateLimitDeps {
  env: TApiEnv;
  redis: TRedis;
  logger: Logger;
}

const pass: RequestHandler = (_req, _res, next) => next();

// Paths relative to the variant's mount point; Express matches routes case-insensitively and with an
// optional trailing slash, so these do too (otherwise `/POSTS/x/PUBLISH/` would dodge the publish limit).
const POSTS_A = /^\/posts\/?$/i;
const POST_A = /^\/posts\/[^/]+\/?$/i;
const PUBLISH_OR_RETRY_A = /^\/posts\/[^/]+\/(publish|retry)\/?$/i;
const PUBLISH_B = /^\/posts\/[^/]+\/publish\/?$/i;

/** Variant A's publishing requests: publish, retry, and create or update with `published: true`. */
function isPublishingA(method: string, path: string, body: unknown): boolean {
  if (method === 'POST' && PUBLISH_OR_RETRY_A.test(path)) return true;
  const publishNow =
    typeof body === 'object' && body !== null && (body as { published?: unknown }).published === true;
  if (!publishNow) return false;
  return (method === 'POST' && POSTS_A.test(path)) || (method === 'PUT' && POST_A.test(path));
}

export function createRateLimits({ env, redis, logger }: TRateLimitDeps): TRateLimits {
  if (env.RATE_LIMITS === 'off')
    return { perIpA: pass, publishA: pass, perKeyB: pass, peekB: async () => null };

  const seconds = (base: number) => Math.max(1, Math.round(base * env.RATE_LIMIT_WINDOW_SCALE));
  const minute = seconds(MINUTE);
  const hour = seconds(HOUR);
  // Under the deployment's QUEUE_PREFIX so two deployments (or test files) sharing a Redis never collide.
  const prefix = `${env.QUEUE_PREFIX}:rl`;
  const limiter = (name: string, limit: number, duration: number) =>
    new WindowLimiter(redis, `${prefix}:${name}`, limit, duration, logger);

  const ipMinuteA = limiter('a:ip-minute', env.RATE_LIMIT_A_PER_MINUTE, minute);
  const ipPublishA = limiter('a:ip-publish-hour', env.RATE_LIMIT_A_PUBLISH_PER_HOUR, hour);
  // One key prefix per window for all tiers: a plan change keeps the count and only moves the limit.
  const tiersB = Object.fromEntries(
    (Object.keys(env.tiersB) as TTierB[]).map((tier) => [
      tier,
      {
        minute: limiter('b:key-minute', env.tiersB[tier].perMinute, minute),
        publish: limiter('b:key-publish-hour', env.tiersB[tier].publishPerHour, hour),
      },
    ]),
  ) as Record<TTierB, { minute: WindowLimiter; publish: WindowLimiter }>;

  const limitedA = (result: TWindowResult, what: string) => {
    const retryAfter = retryAfterSeconds(result);
    return new AppError(
      'rate_limited',
      `Too many ${what} from your IP address: the limit is ${result.limit} per ${what === 'requests' ? 'minute' : 'hour'}`,
      {
        fix: `Wait ${retryAfter} second${retryAfter === 1 ? '' : 's'} (the Retry-After header) before sending more, and spread requests out.`,
        retryAfter,
      },
    );
  };

  return {
    async peekB(plan, keyId) {
      const limits = tiersB[tierOf(plan)];
      const [minute, publish] = await Promise.all([limits.minute.usage(keyId), limits.publish.usage(keyId)]);
      return { minute, publish };
    },

    async perIpA(req, _res, next) {
      const result = await ipMinuteA.consume(clientKey(req.ip));
      if (!result.allowed) throw limitedA(result, 'requests');
      next();
    },

    async publishA(req, _res, next) {
      if (!isPublishingA(req.method, req.path, req.body)) {
        next();
        return;
      }
      const result = await ipPublishA.consume(clientKey(req.ip));
      if (!result.allowed) throw limitedA(result, 'publishing requests');
      next();
    },

    async perKeyB(req, res, next) {
      const auth = authOf(req);
      const limits = tiersB[tierOf(auth.plan)];
      // Publish counts against the hourly publish limit only; every other authenticated /v1 request
      // (including GET /v1/posts/{id}, webhooks and unknown paths) against the per-minute limit.
      const publish = req.method === 'POST' && PUBLISH_B.test(req.path);
      const result = await (publish ? limits.publish : limits.minute).consume(auth.keyId);
      const now = Date.now();
      const reset = resetUnixSeconds(result, now);
      // Set before the route runs, so its 4xx answers carry them too.
      res.setHeader('X-RateLimit-Limit', String(result.limit));
      res.setHeader('X-RateLimit-Remaining', String(result.remaining));
      res.setHeader('X-RateLimit-Reset', String(reset));
      if (!result.allowed) {
        const retryAfter = retryAfterSeconds(result);
        throw new AppError(
          'rate_limited',
          publish
            ? `Publish limit exceeded: ${result.limit} publishes per hour for this API key`
            : `Rate limit exceeded: ${result.limit} requests per minute for this API key`,
          {
            retryAfter,
            details: {
              limit: result.limit,
              remaining: 0,
              reset_at: new Date(reset * 1000).toISOString(),
              retry_after: retryAfter,
            },
          },
        );
      }
      next();
    },
  };
}
