import { randomUUID } from 'node:crypto';
import { presentAccountB, type TPlatform, type TSocialAccountRecord } from '@sps/core/essentials';
import type pg from 'pg';
import type { TPlan } from './plans.js';

// Account, key and connection writes as single plain-SQL statements on any pg pool or client. The Prisma
// repositories delegate to them (one copy of each write), and short-lived processes (the admin CLI) run them
// on one pg connection without loading the Prisma client: `@sps/db/sql` imports nothing but pg and
// `@sps/core/essentials`.

/** A pg.Pool, pg.PoolClient or pg.Client. */
export type TSqlRunner = Pick<pg.Pool, 'query'>;

/** A new account with its first API key (and the owner's dashboard password hash), in one statement. */
export async function insertAccountWithKey(
  sql: TSqlRunner,
  input: { name: string; ownerEmail: string; plan: TPlan; passwordHash: string | null },
  key: { prefix: string; hash: string },
): Promise<{ accountId: string; apiKeyId: string }> {
  const { rows } = await sql.query<{ account_id: string; key_id: string }>(
    `WITH account AS (
       INSERT INTO accounts (id, name, owner_email, plan, password_hash, updated_at)
       VALUES (gen_random_uuid(), $1, $2, $3::"Plan", $4, now())
       RETURNING id)
     INSERT INTO api_keys (id, account_id, prefix, hash)
     SELECT gen_random_uuid(), account.id, $5, $6 FROM account
     RETURNING account_id, id AS key_id`,
    [input.name, input.ownerEmail, input.plan, input.passwordHash, key.prefix, key.hash],
  );
  const row = rows[0];
  if (!row) throw new Error('the account was not created');
  return { accountId: row.account_id, apiKeyId: row.key_id };
}

/** A further key of an existing account; null when there is no such account. */
export async function insertApiKey(
  sql: TSqlRunner,
  accountId: string,
  key: { prefix: string; hash: string },
): Promise<{ id: string } | null> {
  const { rows } = await sql.query<{ id: string }>(
    `INSERT INTO api_keys (id, account_id, prefix, hash)
     SELECT gen_random_uuid(), id, $2, $3 FROM accounts WHERE id = $1::uuid
     RETURNING id`,
    [accountId, key.prefix, key.hash],
  );
  return rows[0] ?? null;
}

/** Changes the plan; the hashes of the account's keys (for cache eviction), or null when there is no account. */
export async function updatePlan(sql: TSqlRunner, accountId: string, plan: TPlan): Promise<string[] | null> {
  const { rows } = await sql.query<{ hashes: string[] }>(
    `WITH account AS (
       UPDATE accounts SET plan = $2::"Plan", updated_at = now() WHERE id = $1::uuid RETURNING id)
     SELECT coalesce((SELECT array_agg(k.hash) FROM api_keys k WHERE k.account_id = account.id), '{}') AS hashes
     FROM account`,
    [accountId, plan],
  );
  return rows[0]?.hashes ?? null;
}

/** Revokes a key (a revoked one keeps its first revocation time); its hash, or null when there is no such key. */
export async function revokeKey(sql: TSqlRunner, keyId: string): Promise<{ hash: string } | null> {
  const { rows } = await sql.query<{ hash: string }>(
    `UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1::uuid RETURNING hash`,
    [keyId],
  );
  return rows[0] ?? null;
}

/** Sets the owner's dashboard password hash; false when there is no such account. */
export async function updatePasswordHash(
  sql: TSqlRunner,
  accountId: string,
  passwordHash: string,
): Promise<boolean> {
  const { rowCount } = await sql.query(
    // A new password ends every dashboard session of the account (a stolen cookie dies with the old password).
    `UPDATE accounts SET password_hash = $2, session_generation = session_generation + 1, updated_at = now()
     WHERE id = $1::uuid`,
    [accountId, passwordHash],
  );
  return (rowCount ?? 0) > 0;
}

export interface TConnectInput {
  /** The new row's id, when the caller sealed the credentials for it (they are bound to their row). */
  id?: string;
  accountId: string;
  platform: TPlatform;
  accountName: string;
  externalId: string | null;
  instanceUrl: string | null;
  /** Already sealed by the caller; the repository never sees plaintext tokens. */
  credentialsEncrypted: string;
  tokenExpiresAt?: Date | null;
  tokenIssuedAt?: Date | null;
  /** The scopes the network granted, space-separated; null or absent: unknown. */
  grantedScopes?: string | null;
}

/**
 * Connects a social account and writes its `account.connected` outbox event in the same statement (so
 * the event exists exactly when the account does); null when the tenant account does not exist.
 */
export async function insertConnectedAccount(
  sql: TSqlRunner,
  input: TConnectInput,
  now = new Date(),
): Promise<TSocialAccountRecord | null> {
  const record: TSocialAccountRecord = {
    id: input.id ?? randomUUID(),
    accountId: input.accountId,
    platform: input.platform,
    accountName: input.accountName,
    externalId: input.externalId,
    instanceUrl: input.instanceUrl,
    isActive: true,
    needsReauth: false,
    tokenExpiresAt: input.tokenExpiresAt ?? null,
    grantedScopes: input.grantedScopes ?? null,
    connectedAt: now,
    disconnectedAt: null,
    createdAt: now,
    updatedAt: now,
  };
  const { rows } = await sql.query<{ id: string }>(
    `WITH social AS (
       INSERT INTO social_accounts (id, account_id, platform, account_name, external_id, instance_url,
         credentials_encrypted, token_expires_at, token_issued_at, connected_at, created_at, updated_at, granted_scopes)
       SELECT $1::uuid, a.id, $3::"Platform", $4, $5, $6, $7, $8::timestamptz, $9::timestamptz, $10, $10, $10, $12
       FROM accounts a WHERE a.id = $2::uuid
       RETURNING id, account_id),
     event AS (
       INSERT INTO events (id, account_id, type, data)
       SELECT gen_random_uuid(), social.account_id, 'account.connected', $11::jsonb FROM social)
     SELECT id FROM social`,
    [
      record.id,
      input.accountId,
      input.platform,
      input.accountName,
      input.externalId,
      input.instanceUrl,
      input.credentialsEncrypted,
      record.tokenExpiresAt,
      input.tokenIssuedAt ?? now,
      now,
      JSON.stringify({ account: presentAccountB(record) }),
      record.grantedScopes,
    ],
  );
  return rows[0] ? record : null;
}
