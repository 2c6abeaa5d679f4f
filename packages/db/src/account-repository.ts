import type { TDb } from './client.js';
import type { Plan } from './generated/prisma/enums.js';

export type TPlan = Plan;
export const PLANS = ['none', 'free', 'starter', 'pro'] as const satisfies readonly TPlan[];

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

    async setPlan(accountId: string, plan: TPlan): Promise<boolean> {
      const { count } = await db.account.updateMany({ where: { id: accountId }, data: { plan } });
      return count > 0;
    },

    findAccount(accountId: string) {
      return db.account.findUnique({ where: { id: accountId } });
    },

    async createApiKey(accountId: string, key: { prefix: string; hash: string }) {
      return db.apiKey.create({
        data: { accountId, prefix: key.prefix, hash: key.hash },
        select: { id: true },
      });
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

    async revokeApiKey(keyId: string): Promise<{ hash: string } | null> {
      const row = await db.apiKey.findUnique({
        where: { id: keyId },
        select: { hash: true, revokedAt: true },
      });
      if (!row) return null;
      if (!row.revokedAt) await db.apiKey.update({ where: { id: keyId }, data: { revokedAt: new Date() } });
      return { hash: row.hash };
    },

    async keyHashesOfAccount(accountId: string): Promise<string[]> {
      const rows = await db.apiKey.findMany({ where: { accountId }, select: { hash: true } });
      return rows.map((r) => r.hash);
    },

    async touchKey(keyId: string, at: Date): Promise<void> {
      await db.apiKey.update({ where: { id: keyId }, data: { lastUsedAt: at } });
    },
  };
}

export type TAccountRepository = ReturnType<typeof createAccountRepository>;
