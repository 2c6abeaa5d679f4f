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

    /** Accounts owned by `email` that have a dashboard password, oldest first. */
    signInCandidates(
      email: string,
    ): Promise<{ id: string; name: string; plan: TPlan; passwordHash: string }[]> {
      return db.account
        .findMany({
          where: { ownerEmail: { equals: email, mode: 'insensitive' }, passwordHash: { not: null } },
          select: { id: true, name: true, plan: true, passwordHash: true },
          orderBy: { createdAt: 'asc' },
          take: SIGN_IN_CANDIDATES,
        })
        .then((rows) => rows.map((r) => ({ ...r, passwordHash: r.passwordHash ?? '' })));
    },

    findOwnerView(accountId: string) {
      return db.account.findUnique({
        where: { id: accountId },
        select: { id: true, name: true, ownerEmail: true, plan: true },
      });
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
