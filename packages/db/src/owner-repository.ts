import type { TPlan } from './account-repository.js';
import { updatePasswordHash } from './account-sql.js';
import { sqlOf, type TDb } from './client.js';

/** Accounts one e-mail may own; more are not tried at sign-in, so one request's work stays bounded. */
const SIGN_IN_CANDIDATES = 5;
/** Keys one account lists in the dashboard (revoked ones last). */
const KEY_LIST_MAX = 200;

export interface TApiKeyView {
  id: string;
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

/** What the owners' dashboard needs beyond the public API: sign-in and the account's API keys. */
export function createOwnerRepository(db: TDb) {
  return {
    setPasswordHash(accountId: string, passwordHash: string): Promise<boolean> {
      return updatePasswordHash(sqlOf(db), accountId, passwordHash);
    },

    /**
     * Accounts owned by `email` that have a dashboard password, oldest first. An exact, case-insensitive
     * match: a pattern (`ILIKE`, which Prisma's `mode: 'insensitive'` is) would let `%` try a password
     * against any owner's accounts.
     */
    async signInCandidates(
      email: string,
    ): Promise<{ id: string; name: string; plan: TPlan; passwordHash: string; sessionGeneration: number }[]> {
      const { rows } = await sqlOf(db).query<{
        id: string;
        name: string;
        plan: TPlan;
        password_hash: string;
        session_generation: number;
      }>(
        `SELECT id, name, plan::text AS plan, password_hash, session_generation FROM accounts
         WHERE lower(owner_email) = lower($1) AND password_hash IS NOT NULL
         ORDER BY created_at ASC, id ASC LIMIT $2`,
        [email, SIGN_IN_CANDIDATES],
      );
      return rows.map((r) => ({
        id: r.id,
        name: r.name,
        plan: r.plan,
        passwordHash: r.password_hash,
        sessionGeneration: r.session_generation,
      }));
    },

    findOwnerView(accountId: string) {
      return db.account.findUnique({
        where: { id: accountId },
        select: { id: true, name: true, ownerEmail: true, plan: true, sessionGeneration: true },
      });
    },

    /**
     * The same password hashed again with stronger parameters (at sign-in): only over the hash that was
     * verified, so a password changed meanwhile is kept, and without ending sessions (the password is the same).
     */
    async upgradePasswordHash(accountId: string, verified: string, upgraded: string): Promise<void> {
      await db.account.updateMany({
        where: { id: accountId, passwordHash: verified },
        data: { passwordHash: upgraded },
      });
    },

    /** Ends every dashboard session of the account (at each one's next request); false: no such account. */
    async endAllSessions(accountId: string): Promise<boolean> {
      const { count } = await db.account.updateMany({
        where: { id: accountId },
        data: { sessionGeneration: { increment: 1 } },
      });
      return count > 0;
    },

    listApiKeys(accountId: string): Promise<TApiKeyView[]> {
      return db.apiKey.findMany({
        where: { accountId },
        select: { id: true, prefix: true, createdAt: true, lastUsedAt: true, revokedAt: true },
        orderBy: [{ revokedAt: { sort: 'desc', nulls: 'first' } }, { createdAt: 'desc' }],
        take: KEY_LIST_MAX,
      });
    },

    /** Revokes one of the account's keys; null when the account has no such key (tenancy). */
    async revokeApiKeyOf(accountId: string, keyId: string): Promise<{ hash: string } | null> {
      const row = await db.apiKey.findFirst({
        where: { id: keyId, accountId },
        select: { hash: true, revokedAt: true },
      });
      if (!row) return null;
      if (!row.revokedAt) await db.apiKey.update({ where: { id: keyId }, data: { revokedAt: new Date() } });
      return { hash: row.hash };
    },
  };
}

export type TOwnerRepository = ReturnType<typeof createOwnerRepository>;
