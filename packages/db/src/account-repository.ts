import { insertApiKey, revokeKey, updatePlan } from './account-sql.js';
import { sqlOf, type TDb } from './client.js';
import type { TPlan } from './plans.js';

export { PLANS, type TPlan } from './plans.js';

export interface TAuthenticatedKey {
  keyId: string;
  accountId: string;
  plan: TPlan;
  hash: string;
  lastUsedAt: Date | null;
}

export function createAccountRepository(db: TDb) {
  return {
    async createAccount(input: { name: string; ownerEmail: string; plan: TPlan }) {
      return db.account.create({
        data: input,
        select: { id: true, name: true, ownerEmail: true, plan: true },
      });
    },

    /** The hashes of the account's keys (to evict them from caches), or null when there is no such account. */
    setPlan(accountId: string, plan: TPlan): Promise<string[] | null> {
      return updatePlan(sqlOf(db), accountId, plan);
    },

    findAccount(accountId: string) {
      return db.account.findUnique({ where: { id: accountId } });
    },

    async createApiKey(accountId: string, key: { prefix: string; hash: string }): Promise<{ id: string }> {
      const row = await insertApiKey(sqlOf(db), accountId, key);
      if (!row) throw new Error(`no account ${accountId}`);
      return row;
    },

    /** Looks a key up by its hash; revoked keys are not found. */
    async findActiveKey(hash: string): Promise<TAuthenticatedKey | null> {
      const row = await db.apiKey.findUnique({
        where: { hash },
        select: {
          id: true,
          accountId: true,
          hash: true,
          revokedAt: true,
          lastUsedAt: true,
          account: { select: { plan: true } },
        },
      });
      if (!row || row.revokedAt) return null;
      return {
        keyId: row.id,
        accountId: row.accountId,
        plan: row.account.plan,
        hash: row.hash,
        lastUsedAt: row.lastUsedAt,
      };
    },

    revokeApiKey(keyId: string): Promise<{ hash: string } | null> {
      return revokeKey(sqlOf(db), keyId);
    },

    async touchKey(keyId: string, at: Date): Promise<void> {
      await db.apiKey.update({ where: { id: keyId }, data: { lastUsedAt: at } });
    },
  };
}

export type TAccountRepository = ReturnType<typeof createAccountRepository>;
