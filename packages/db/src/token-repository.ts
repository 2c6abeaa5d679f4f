import type { TPlatform } from '@sps/core';
import { sqlOf, type TDb } from './client.js';

/** A connected account's sealed credentials with the version a refresh must write over (fencing). */
export interface TStoredToken {
  id: string;
  accountId: string;
  platform: TPlatform;
  externalId: string | null;
  /** The handle shown for the account (Bluesky signs in with it when no DID is stored). */
  accountName: string;
  instanceUrl: string | null;
  isActive: boolean;
  credentialsEncrypted: string;
  credentialsVersion: number;
  tokenExpiresAt: Date | null;
  tokenIssuedAt: Date | null;
}

export interface TReauthNotice {
  id: string;
  platform: TPlatform;
  accountName: string;
  ownerEmail: string;
}

const COLUMNS = `id, account_id AS "accountId", platform::text AS platform, external_id AS "externalId",
  account_name AS "accountName", instance_url AS "instanceUrl", is_active AS "isActive", credentials_encrypted AS "credentialsEncrypted",
  credentials_version AS "credentialsVersion", token_expires_at AS "tokenExpiresAt", token_issued_at AS "tokenIssuedAt"`;

/** Token upkeep: what the refresher reads and writes, and the owners' re-authorisation notices. */
export function createTokenRepository(db: TDb) {
  const sql = () => sqlOf(db);
  return {
    async read(socialAccountId: string): Promise<TStoredToken | null> {
      const { rows } = await sql().query<TStoredToken>({
        name: 'token_read',
        text: `SELECT ${COLUMNS} FROM social_accounts WHERE id = $1`,
        values: [socialAccountId],
      });
      return rows[0] ?? null;
    },

    /**
     * Stores refreshed credentials only over the version that was read: a writer whose lock lapsed
     * cannot overwrite a newer refresh (the fencing check). Returns false when it lost.
     */
    async storeRefreshed(
      socialAccountId: string,
      expectedVersion: number,
      update: {
        credentialsEncrypted: string;
        tokenExpiresAt: Date | null;
        tokenIssuedAt: Date;
        /** The scopes the refresh answer says were granted; null keeps the stored ones. */
        grantedScopes?: string | null;
      },
    ): Promise<boolean> {
      const { rowCount } = await sql().query({
        name: 'token_store_refreshed',
        text: `UPDATE social_accounts SET credentials_encrypted = $3, token_expires_at = $4, token_issued_at = $5,
                 granted_scopes = COALESCE($6, granted_scopes), credentials_version = credentials_version + 1, updated_at = now()
               WHERE id = $1 AND credentials_version = $2 AND is_active`,
        values: [
          socialAccountId,
          expectedVersion,
          update.credentialsEncrypted,
          update.tokenExpiresAt,
          update.tokenIssuedAt,
          update.grantedScopes ?? null,
        ],
      });
      return rowCount === 1;
    },

    /** Active accounts whose token expires before `before`, soonest first (the reconciler's refresh jobs). */
    async expiringBefore(before: Date, limit: number): Promise<TStoredToken[]> {
      const { rows } = await sql().query<TStoredToken>({
        name: 'token_expiring_before',
        text: `SELECT ${COLUMNS} FROM social_accounts
               WHERE is_active AND token_expires_at IS NOT NULL AND token_expires_at < $1
               ORDER BY token_expires_at LIMIT $2`,
        values: [before, limit],
      });
      return rows;
    },

    /**
     * Claims owner notices of accounts a refused token disconnected (each once, safe across processes):
     * claimed rows are marked `sent` before the mail goes out; `release` puts back one whose mail failed.
     */
    async claimReauthNotices(limit: number): Promise<TReauthNotice[]> {
      const { rows } = await sql().query<TReauthNotice>({
        name: 'token_claim_notices',
        text: `UPDATE social_accounts s SET reauth_notice = 'sent'
               FROM accounts a
               WHERE s.account_id = a.id AND s.id IN (
                 SELECT id FROM social_accounts WHERE reauth_notice = 'pending'
                 ORDER BY updated_at LIMIT $1 FOR UPDATE SKIP LOCKED)
               RETURNING s.id, s.platform::text AS platform, s.account_name AS "accountName",
                 a.owner_email AS "ownerEmail"`,
        values: [limit],
      });
      return rows;
    },

    async releaseReauthNotice(socialAccountId: string): Promise<void> {
      await sql().query({
        name: 'token_release_notice',
        text: `UPDATE social_accounts SET reauth_notice = 'pending' WHERE id = $1 AND reauth_notice = 'sent'`,
        values: [socialAccountId],
      });
    },
  };
}

export type TTokenRepository = ReturnType<typeof createTokenRepository>;
