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

  private key(id: string): string {
    return `${this.options.prefix}:dash:session:${createHash('sha256').update(id).digest('hex')}`;
  }

  async create(accountId: string, plan: TPlan): Promise<{ id: string; session: TSession }> {
    const id = randomBytes(32).toString('base64url');
    const session: TSession = {
      accountId,
      plan,
      csrf: randomBytes(32).toString('base64url'),
      createdAt: Date.now(),
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

  /** Whether the session exists, without restarting its idle timer (an open event stream is not a use). */
  async exists(id: string): Promise<boolean> {
    return (await this.redis.exists(this.key(id))) === 1;
  }

  async destroy(id: string): Promise<void> {
    await this.redis.del(this.key(id));
  }
}
