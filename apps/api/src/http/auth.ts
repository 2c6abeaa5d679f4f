import { AppError, hashApiKey, looksLikeApiKey, safeEqual } from '@sps/core';
import type { TAccountRepository, TAuthenticatedKey, TPlan } from '@sps/db';
import type { TSubscriber } from '@sps/queue';
import type { RequestHandler, Response } from 'express';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import { clientKey } from './client-address.js';

export interface TAuth {
  accountId: string;
  keyId: string;
  plan: TPlan;
}

declare global {
  namespace Express {
    interface Request {
      auth?: TAuth;
    }
  }
}

/** The authenticated caller; routes behind `authenticate` always have it. */
export function authOf(req: { auth?: TAuth }): TAuth {
  if (!req.auth) throw new AppError('unauthorized', 'Missing API key');
  return req.auth;
}

const TOUCH_EVERY_MS = 60_000;
/**
 * Unknown keys are remembered this long (a client retrying a revoked or mistyped key costs no query). Safe
 * for any length: keys are 256 random bits, so no key can be created after its hash was refused.
 */
const NEGATIVE_TTL_MS = 5 * 60_000;
const NEGATIVE_MAX = 20_000;
/** Lookups waiting for a turn; past it a request is refused with 503 rather than queued without end. */
const LOOKUP_QUEUE_MAX = 500;

export type TLookupOutcome = 'found' | 'unknown' | 'busy';

/** A per-address counter of failed authentications (WindowLimiter in rate-limit.ts). */
export interface TFailureLimiter {
  readonly limit: number;
  /** The address's window without counting: `allowed: false` once it is used up; null when never counted. */
  peek(key: string): Promise<{ allowed: boolean; msBeforeNext: number } | null>;
  consume(key: string): Promise<unknown>;
}

export interface TVerifierOptions {
  ttlMs: number;
  /** Database lookups of keys that are not cached, at once (the rest of the pool stays for requests). */
  lookupConcurrency: number;
  /** Failed authentications per client address; past it uncached keys are refused before the database. */
  failures?: TFailureLimiter;
  /** Counts lookups and refusals (the API's /metrics). */
  onLookup?: (outcome: TLookupOutcome) => void;
  onRefused?: (reason: 'invalid' | 'blocked') => void;
}

/** At most `limit` lookups at once; the others wait in order, up to LOOKUP_QUEUE_MAX of them. */
class LookupGate {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running >= this.limit) {
      if (this.waiting.length >= LOOKUP_QUEUE_MAX) {
        throw new AppError('service_unavailable', 'Too many API keys are being checked at once', {
          fix: 'Retry in a moment.',
          retryAfter: 1,
        });
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else this.running += 1;
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running -= 1;
    }
  }
}

/**
 * Verifies API keys with a short in-process cache: the database is asked once per key per TTL, and
 * revocations or plan changes evict entries in every API process at once through Redis pub/sub (the whole
 * cache is dropped when that subscription reconnects, as messages sent meanwhile are lost). Unknown keys
 * are cached too, lookups of uncached keys take turns through a small gate so a flood of made-up keys
 * cannot hold the database pool, and failed authentications are limited per client address.
 */
export class ApiKeyVerifier {
  private readonly cache = new Map<string, { key: TAuthenticatedKey; until: number }>();
  private readonly unknown = new LRUCache<string, true>({ max: NEGATIVE_MAX, ttl: NEGATIVE_TTL_MS });
  /** Addresses known to be over the failure limit, until when: their refusals cost no Redis round trip. */
  private readonly blocked = new LRUCache<string, number>({ max: NEGATIVE_MAX });
  private readonly gate: LookupGate;
  /**
   * Counts evictions. A lookup that began before an eviction may return after it with the key as it was
   * (a revocation racing a request): it answers its own request but is not cached if this moved meanwhile.
   */
  private evictions = 0;

  constructor(
    private readonly accounts: TAccountRepository,
    private readonly options: TVerifierOptions,
    private readonly logger: Logger,
  ) {
    this.gate = new LookupGate(Math.max(1, options.lookupConcurrency));
  }

  static channel(prefix: string): string {
    return `${prefix}:auth-invalidate`;
  }

  /** Subscribes to evictions; `subscriber` must be a dedicated connection. */
  async listen(subscriber: TSubscriber, prefix: string): Promise<void> {
    let connectedOnce = false;
    subscriber.on('ready', () => {
      // ioredis subscribes again by itself; evictions published while it was away are lost, so nothing
      // cached before can be trusted.
      if (connectedOnce) {
        this.clear();
        this.logger.warn('key revocation subscription reconnected; the API key cache was emptied');
      }
      connectedOnce = true;
    });
    await subscriber.subscribe(ApiKeyVerifier.channel(prefix));
    connectedOnce = true;
    subscriber.on('message', (_channel: string, hash: string) => {
      if (hash === '*') this.clear();
      else this.evict(hash);
    });
  }

  /** Forgets every verified key (they are looked up again on their next use). */
  clear(): void {
    this.evictions += 1;
    this.cache.clear();
  }

  /** Forgets one key (revoked, or its account's plan changed). */
  evict(hash: string): void {
    this.evictions += 1;
    this.cache.delete(hash);
  }

  /** A key verified less than a TTL ago: answered without the database or any limit. */
  cached(presented: string): TAuthenticatedKey | null {
    if (!looksLikeApiKey(presented)) return null;
    const hash = hashApiKey(presented);
    const cached = this.cache.get(hash);
    return cached && cached.until > Date.now() && safeEqual(cached.key.hash, hash) ? cached.key : null;
  }

  /**
   * Checks a key; `clientOf` names the caller's address for the failure limit. Throws `rate_limited` when
   * that address failed too often and the key is not one verified recently.
   */
  async verify(
    presented: string,
    clientOf: string | (() => string) = 'unknown',
  ): Promise<TAuthenticatedKey | null> {
    const hit = this.cached(presented);
    if (hit) return hit;
    // Worked out only off the cached path: parsing the address costs every request otherwise.
    const client = typeof clientOf === 'string' ? clientOf : clientOf();
    const { failures } = this.options;
    if (failures) {
      const now = Date.now();
      let blockedUntil = this.blocked.get(client) ?? 0;
      if (blockedUntil <= now) {
        const state = await failures.peek(client);
        blockedUntil = state && !state.allowed ? now + state.msBeforeNext : 0;
        if (blockedUntil > now) this.blocked.set(client, blockedUntil);
      }
      if (blockedUntil > now) {
        this.options.onRefused?.('blocked');
        const retryAfter = Math.max(1, Math.ceil((blockedUntil - now) / 1000));
        // Variant B's 429 details (interface spec), for the failure limit of this address.
        throw new AppError('rate_limited', 'Too many requests with a wrong API key from your address', {
          fix: `Check the key; wait ${retryAfter} s (the Retry-After header) before trying again.`,
          retryAfter,
          details: {
            limit: failures.limit,
            remaining: 0,
            reset_at: new Date(now + retryAfter * 1000).toISOString(),
            retry_after: retryAfter,
          },
        });
      }
    }
    const key = looksLikeApiKey(presented) ? await this.lookup(hashApiKey(presented)) : null;
    if (!key) {
      this.options.onRefused?.('invalid');
      if (failures) await failures.consume(client);
    }
    return key;
  }

  private async lookup(hash: string): Promise<TAuthenticatedKey | null> {
    if (this.unknown.get(hash)) return null;
    const now = Date.now();
    // A key that was valid until its entry expired is looked up without queueing behind unknown keys.
    const knownGood = this.cache.has(hash);
    const find = () => this.accounts.findActiveKey(hash);
    const evictionsBefore = this.evictions;
    let key: TAuthenticatedKey | null;
    try {
      key = knownGood ? await find() : await this.gate.run(find);
    } catch (error) {
      if (error instanceof AppError && error.code === 'service_unavailable') this.options.onLookup?.('busy');
      throw error;
    }
    // The lookup is by hash; compare again in constant time so no branch depends on partial matches.
    if (!key || !safeEqual(key.hash, hash)) {
      this.options.onLookup?.('unknown');
      this.cache.delete(hash);
      this.unknown.set(hash, true);
      return null;
    }
    this.options.onLookup?.('found');
    if (this.options.ttlMs > 0 && this.evictions === evictionsBefore)
      this.cache.set(hash, { key, until: now + this.options.ttlMs });
    if (!key.lastUsedAt || now - key.lastUsedAt.getTime() > TOUCH_EVERY_MS) {
      key.lastUsedAt = new Date(now);
      this.accounts
        .touchKey(key.keyId, key.lastUsedAt)
        .catch((err: unknown) => this.logger.warn({ err }, 'could not record key use'));
    }
    return key;
  }
}

function presentedKey(
  header: string | undefined,
  xApiKey: string | undefined,
  allowXApiKey: boolean,
): string | null {
  if (header) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    return match?.[1] ?? '';
  }
  if (allowXApiKey && xApiKey) return xApiKey.trim();
  return null;
}

/**
 * Variant B's rate-limit headers on the wrong-key limit's 429 (the spec wants them on every 429 with
 * Retry-After, which the error handler sets): the address's failure window, used up.
 */
function setFailureWindowHeaders(res: Response, error: AppError): void {
  const details = error.details as { limit?: unknown; reset_at?: unknown };
  const resetMs = typeof details.reset_at === 'string' ? Date.parse(details.reset_at) : Number.NaN;
  if (typeof details.limit !== 'number' || !Number.isFinite(resetMs)) return;
  res.setHeader('X-RateLimit-Limit', String(details.limit));
  res.setHeader('X-RateLimit-Remaining', '0');
  res.setHeader('X-RateLimit-Reset', String(Math.ceil(resetMs / 1000)));
}

export function authenticate(
  verifier: ApiKeyVerifier,
  options: { allowXApiKey: boolean; rateLimitHeaders?: boolean },
): RequestHandler {
  const how = options.allowXApiKey
    ? 'Authorization: Bearer <API_KEY> or x-api-key: <API_KEY>'
    : 'Authorization: Bearer <API_KEY>';
  return async (req, res, next) => {
    const key = presentedKey(req.get('authorization'), req.get('x-api-key'), options.allowXApiKey);
    if (key === null) {
      throw new AppError('unauthorized', 'Missing API key', { fix: `Send your API key as ${how}.` });
    }
    let found: TAuthenticatedKey | null;
    try {
      found = await verifier.verify(key, () => clientKey(req.ip));
    } catch (error) {
      if (options.rateLimitHeaders && error instanceof AppError && error.code === 'rate_limited')
        setFailureWindowHeaders(res, error);
      throw error;
    }
    if (!found) {
      throw new AppError('unauthorized', 'Invalid API key', {
        fix: 'Check that the key is complete and has not been revoked; create a new one in the dashboard if needed.',
      });
    }
    req.auth = { accountId: found.accountId, keyId: found.keyId, plan: found.plan };
    next();
  };
}
