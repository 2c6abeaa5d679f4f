import { AppError, hashApiKey, looksLikeApiKey, safeEqual } from '@sps/core';
import type { TAccountRepository, TAuthenticatedKey, TPlan } from '@sps/db';
import type { RequestHandler } from 'express';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

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
 * Verifies API keys with a short in-process cache: the database is asked once per key per TTL, and
 * revocations or plan changes evict entries in every API process at once through Redis pub/sub.
 */
export class ApiKeyVerifier {
  private readonly cache = new Map<string, { key: TAuthenticatedKey; until: number }>();

  constructor(
    private readonly accounts: TAccountRepository,
    private readonly ttlMs: number,
    private readonly logger: Logger,
  ) {}

  static channel(prefix: string): string {
    return `${prefix}:auth-invalidate`;
  }

  /** Subscribes to evictions; `subscriber` must be a dedicated connection. */
  async listen(subscriber: Redis, prefix: string): Promise<void> {
    await subscriber.subscribe(ApiKeyVerifier.channel(prefix));
    subscriber.on('message', (_channel: string, hash: string) => {
      if (hash === '*') this.cache.clear();
      else this.cache.delete(hash);
    });
  }

  async verify(presented: string): Promise<TAuthenticatedKey | null> {
    if (!looksLikeApiKey(presented)) return null;
    const hash = hashApiKey(presented);
    const now = Date.now();
    const cached = this.cache.get(hash);
    if (cached && cached.until > now && safeEqual(cached.key.hash, hash)) return cached.key;
    const key = await this.accounts.findActiveKey(hash);
    // The lookup is by hash; compare again in constant time so no branch depends on partial matches.
    if (!key || !safeEqual(key.hash, hash)) {
      this.cache.delete(hash);
      return null;
    }
    if (this.ttlMs > 0) this.cache.set(hash, { key, until: now + this.ttlMs });
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

export function authenticate(verifier: ApiKeyVerifier, options: { allowXApiKey: boolean }): RequestHandler {
  const how = options.allowXApiKey
    ? 'Authorization: Bearer <API_KEY> or x-api-key: <API_KEY>'
    : 'Authorization: Bearer <API_KEY>';
  return async (req, _res, next) => {
    const key = presentedKey(req.get('authorization'), req.get('x-api-key'), options.allowXApiKey);
    if (key === null) {
      throw new AppError('unauthorized', 'Missing API key', { fix: `Send your API key as ${how}.` });
    }
    const found = key ? await verifier.verify(key) : null;
    if (!found) {
      throw new AppError('unauthorized', 'Invalid API key', {
        fix: 'Check that the key is complete and has not been revoked; create a new one in the dashboard if needed.',
      });
    }
    req.auth = { accountId: found.accountId, keyId: found.keyId, plan: found.plan };
    next();
  };
}
