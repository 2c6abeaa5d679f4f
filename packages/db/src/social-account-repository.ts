import { randomUUID } from 'node:crypto';
import { presentAccountB, type TPlatform, type TSocialAccountRecord } from '@sps/core';
import { insertConnectedAccount, type TConnectInput } from './account-sql.js';
import { batchLoader } from './batch.js';
import { sqlOf, type TDb } from './client.js';
import { recordEvent } from './event-repository.js';
import type { SocialAccountModel } from './generated/prisma/models/SocialAccount.js';

function toRecord(row: SocialAccountModel): TSocialAccountRecord {
  return {
    id: row.id,
    accountId: row.accountId,
    platform: row.platform as TPlatform,
    accountName: row.accountName,
    externalId: row.externalId,
    instanceUrl: row.instanceUrl,
    isActive: row.isActive,
    needsReauth: row.needsReauth,
    tokenExpiresAt: row.tokenExpiresAt,
    grantedScopes: row.grantedScopes,
    connectedAt: row.connectedAt,
    disconnectedAt: row.disconnectedAt,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

export type { TConnectInput };

export interface TReviveInput extends Omit<TConnectInput, 'credentialsEncrypted'> {
  externalId: string;
  /**
   * Seals the credentials to store, given the sealed ones of the account being revived (null for a new
   * one): the caller keeps a refresh token the network did not send again. Runs inside the transaction.
   */
  seal(previous: string | null, socialAccountId: string): string;
}

export function createSocialAccountRepository(db: TDb) {
  // Every connected account of each account in the batch (a handful per tenant); callers filter.
  const lists = batchLoader<string, TSocialAccountRecord[]>(async (accountIds) => {
    const { rows } = await sqlOf(db).query<TSocialAccountRecord>({
      name: 'social_accounts_of',
      text: `SELECT id, account_id AS "accountId", platform::text AS platform, account_name AS "accountName",
                    external_id AS "externalId", instance_url AS "instanceUrl", is_active AS "isActive",
                    needs_reauth AS "needsReauth", token_expires_at AS "tokenExpiresAt", granted_scopes AS "grantedScopes", connected_at AS "connectedAt", disconnected_at AS "disconnectedAt",
                    created_at AS "createdAt", updated_at AS "updatedAt"
             FROM social_accounts WHERE account_id = ANY ($1::uuid[])
             ORDER BY created_at, id`,
      values: [[...new Set(accountIds)]],
    });
    return accountIds.map((id) => rows.filter((row) => row.accountId === id));
  });

  return {
    /** Connects an account and emits `account.connected` in the same transaction. */
    async connect(input: TConnectInput): Promise<TSocialAccountRecord> {
      const record = await insertConnectedAccount(sqlOf(db), input);
      if (!record) throw new Error(`no account ${input.accountId}`);
      return record;
    },

    /**
     * Connects a network user, or revives the account that user had (same network, external id and
     * instance), keeping its id and history; emits `account.connected` in the same transaction.
     */
    async connectOrRevive(input: TReviveInput): Promise<TSocialAccountRecord> {
      return db.$transaction(async (tx) => {
        // One connect per (tenant, network user) at a time: two callbacks for one user must not make two rows.
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`connect:${input.accountId}:${input.platform}:${input.externalId}`}))`;
        const existing = await tx.socialAccount.findFirst({
          where: {
            accountId: input.accountId,
            platform: input.platform,
            externalId: input.externalId,
            instanceUrl: input.instanceUrl,
          },
          orderBy: [{ updatedAt: 'desc' }, { id: 'asc' }],
        });
        // The row's id is chosen here, so the credentials can be sealed for it (bound to their row).
        const id = existing?.id ?? randomUUID();
        const data = {
          accountName: input.accountName,
          credentialsEncrypted: input.seal(existing?.credentialsEncrypted ?? null, id),
          tokenExpiresAt: input.tokenExpiresAt ?? null,
          tokenIssuedAt: input.tokenIssuedAt ?? new Date(),
          // What the network granted this time (a reconnect replaces it); unknown stays unknown.
          grantedScopes: input.grantedScopes ?? null,
        };
        const row = existing
          ? await tx.socialAccount.update({
              where: { id: existing.id },
              data: {
                ...data,
                isActive: true,
                needsReauth: false,
                reauthNotice: null,
                disconnectedAt: null,
                connectedAt: new Date(),
                credentialsVersion: { increment: 1 },
              },
            })
          : await tx.socialAccount.create({
              data: {
                ...data,
                id,
                accountId: input.accountId,
                platform: input.platform,
                externalId: input.externalId,
                instanceUrl: input.instanceUrl,
              },
            });
        const record = toRecord(row);
        await recordEvent(tx, {
          accountId: input.accountId,
          type: 'account.connected',
          data: { account: presentAccountB(record) },
        });
        return record;
      });
    },

    /**
     * Marks the account inactive and emits `account.disconnected`. `expired` is the network saying the
     * token is no longer valid: the account then also needs re-authorisation (Variant A `needsReauth`).
     */
    async disconnect(
      accountId: string,
      socialAccountId: string,
      reason: 'manual' | 'expired',
    ): Promise<TSocialAccountRecord | null> {
      return db.$transaction(async (tx) => {
        const existing = await tx.socialAccount.findFirst({ where: { id: socialAccountId, accountId } });
        if (!existing) return null;
        if (!existing.isActive && (reason === 'manual' || existing.needsReauth)) return toRecord(existing);
        const row = await tx.socialAccount.update({
          where: { id: socialAccountId },
          data: {
            isActive: false,
            needsReauth: reason === 'expired',
            disconnectedAt: new Date(),
            // The webhooks worker e-mails the owner once for a token the network refused.
            ...(reason === 'expired' ? { reauthNotice: 'pending' } : {}),
          },
        });
        const record = toRecord(row);
        await recordEvent(tx, {
          accountId,
          type: 'account.disconnected',
          data: { account: presentAccountB(record) },
        });
        return record;
      });
    },

    /** Plain SQL, batched across concurrent requests: every publish request checks the connected accounts here. */
    async list(
      accountId: string,
      filter: { platforms?: readonly TPlatform[]; includeInactive?: boolean } = {},
    ): Promise<TSocialAccountRecord[]> {
      const all = await lists.load(accountId.toLowerCase());
      return all.filter(
        (a) =>
          (filter.includeInactive || a.isActive) &&
          (!filter.platforms || filter.platforms.includes(a.platform)),
      );
    },

    /** Active accounts of the given networks, with sealed credentials, for the publisher. */
    async activeWithCredentials(accountId: string, platforms: readonly TPlatform[]) {
      const rows = await db.socialAccount.findMany({
        where: { accountId, isActive: true, platform: { in: [...platforms] } },
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      });
      return rows.map((row) => ({ ...toRecord(row), credentialsEncrypted: row.credentialsEncrypted }));
    },
  };
}

export type TSocialAccountRepository = ReturnType<typeof createSocialAccountRepository>;
