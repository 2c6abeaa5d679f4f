import { createHash, randomBytes } from 'node:crypto';
import type { TPlan } from '@sps/db';
import type { TRedis } from '@sps/queue';

/** A signed-in owner. The cookie holds only the session id; Redis holds this under the id's hash. */
export interface TSession {
  accountId: string;
  plan: TPlan;
  /** Sent back by the page as `X-CSRF-Token` on every state-changing request. */
  csrf: string;
  createdAt: number;
  /** The account's `session_generation` at sign-in: a raised one (new password, sign out everywhere) ends it. */
  generation?: number;
  /**
   * The value of the `sps_connect` cookie set at sign-in: an OAuth flow this session starts is finished by
   * the callback only in the browser that presents it (older sessions have none and cannot connect).
   */
  connect?: string;
}

export interface TSessionOptions {
  /** Key prefix (the deployment's QUEUE_PREFIX), so deployments sharing a Redis never mix sessions. */
  prefix: string;
  /** A session unused this long ends. */
  idleMs: number;
  /** A session ends this long after sign-in, used or not. */
  absoluteMs: number;
}

/**
 * Dashboard sessions in Redis, so every API process knows every session and sign-out is immediate everywhere.
 * Keys are the SHA-256 of the session id: a copy of Redis does not hand out live cookies.
 */
export class SessionStore {
  constructor(
    private readonly redis: TRedis,
    private readonly options: TSessionOptions,
  ) {}

  /** The session's name at rest (and in `oauth_states.session_hash`): the SHA-256 of its id. */
  static hashOf(id: string): string {
    return createHash('sha256').update(id).digest('hex');
  }

  private key(id: string): string {
    return this.keyOfHash(SessionStore.hashOf(id));
  }

  private keyOfHash(hash: string): string {
    return `${this.options.prefix}:dash:session:${hash}`;
  }

  async create(
    accountId: string,
    plan: TPlan,
    generation: number,
  ): Promise<{ id: string; session: TSession }> {
    const id = randomBytes(32).toString('base64url');
    const session: TSession = {
      accountId,
      plan,
      csrf: randomBytes(32).toString('base64url'),
      createdAt: Date.now(),
      generation,
      connect: randomBytes(32).toString('base64url'),
    };
    await this.redis.set(this.key(id), JSON.stringify(session), 'PX', this.options.idleMs);
    return { id, session };
  }

  /** The session, its idle timer restarted; null when unknown, expired or past its absolute lifetime. */
  async get(id: string): Promise<TSession | null> {
    const key = this.key(id);
    const raw = await this.redis.get(key);
    if (!raw) return null;
    const session = JSON.parse(raw) as TSession;
    const left = session.createdAt + this.options.absoluteMs - Date.now();
    if (left <= 0) {
      await this.redis.del(key);
      return null;
    }
    await this.redis.pexpire(key, Math.min(this.options.idleMs, left));
    return session;
  }

  /**
   * The live session stored under `hash` (for the OAuth callback, which never sees the session cookie, and an
   * open event stream, which is not a use), without restarting its idle timer; null when it has ended.
   */
  async peekByHash(hash: string): Promise<TSession | null> {
    if (!/^[0-9a-f]{64}$/.test(hash)) return null;
    const raw = await this.redis.get(this.keyOfHash(hash));
    if (!raw) return null;
    const session = JSON.parse(raw) as TSession;
    return session.createdAt + this.options.absoluteMs > Date.now() ? session : null;
  }

  async destroy(id: string): Promise<void> {
    await this.redis.del(this.key(id));
  }
}
