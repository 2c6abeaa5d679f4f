import { randomUUID } from 'node:crypto';
import { idempotencyKeyInUse } from '@sps/core';
import { inSqlTransaction, sqlOf, type TDb, type TTx } from './client.js';

/**
 * What a request holding a key writes in the same statement as the resource it makes: the resource, and
 * (when the answer is already known) the answer. `token` fences it: a request whose lease was taken over
 * writes nothing, resource included.
 */
export interface TIdempotencyWrite {
  accountId: string;
  key: string;
  token: string;
  /** The answer, when known before the resource is written (a create); null: stored later. */
  status: number | null;
  /** The answer's body as stored (sealed by the caller). */
  body: string | null;
}

export interface TIdempotencyClaimInput {
  accountId: string;
  key: string;
  fingerprint: string;
  /** How long the claimer counts as running before a retry may take over (it crashed). */
  leaseMs: number;
  ttlMs: number;
}

export type TIdempotencyClaim =
  | {
      kind: 'claimed';
      token: string;
      /** Set when a crashed earlier holder had already made its resource: the request resumes from it. */
      resourceId: string | null;
      resourceAttempt: number | null;
    }
  | { kind: 'replay'; status: number; body: string }
  | { kind: 'in_use' }
  | { kind: 'reused' };

interface TKeyRow {
  fingerprint: string;
  locked: boolean;
  expired: boolean;
  resource_id: string | null;
  resource_attempt: number | null;
  response_status: number | null;
  response_body: string | null;
}

/**
 * Writes a key's record inside the Prisma transaction that makes `resourceId`: the resource, and the answer
 * when it is known. Throws 409 `idempotency_key_in_use` (rolling the transaction back, resource included)
 * when the request no longer holds its key.
 */
export async function writeIdempotencyInTx(
  tx: TTx,
  write: TIdempotencyWrite,
  resourceId: string,
): Promise<void> {
  const updated = await tx.$executeRaw`
    UPDATE idempotency_keys SET resource_id = ${resourceId}::uuid, response_status = ${write.status},
      response_body = ${write.body},
      lock_token = CASE WHEN ${write.status}::int IS NULL THEN lock_token END
    WHERE account_id = ${write.accountId}::uuid AND key = ${write.key} AND lock_token = ${write.token}::uuid`;
  if (updated !== 1) throw idempotencyKeyInUse();
}

/**
 * Idempotency keys (`idempotency_keys`): one row per account and key. A request claims its key (a lease),
 * writes its resource and the row together, and stores its answer; a retry replays the answer. Times are
 * the database's, so API instances with skewed clocks agree on leases and expiry.
 */
export function createIdempotencyRepository(db: TDb) {
  const pool = sqlOf(db);

  return {
    async claim(input: TIdempotencyClaimInput): Promise<TIdempotencyClaim> {
      const { accountId, key, fingerprint, leaseMs, ttlMs } = input;
      // A row deleted between the insert and the read (a released key) is tried again, a few times at most.
      for (let round = 0; round < 3; round += 1) {
        const token = randomUUID();
        const inserted = await pool.query({
          name: 'idem_claim',
          text: `INSERT INTO idempotency_keys (account_id, key, fingerprint, lock_token, locked_until, created_at, expires_at)
                 VALUES ($1, $2, $3, $4, now() + $5 * interval '1 millisecond', now(), now() + $6 * interval '1 millisecond')
                 ON CONFLICT (account_id, key) DO NOTHING`,
          values: [accountId, key, fingerprint, token, leaseMs, ttlMs],
        });
        if (inserted.rowCount === 1)
          return { kind: 'claimed', token, resourceId: null, resourceAttempt: null };
        const outcome = await inSqlTransaction(db, async (client): Promise<TIdempotencyClaim | null> => {
          const { rows } = await client.query<TKeyRow>({
            name: 'idem_read',
            text: `SELECT fingerprint, locked_until > now() AS locked, expires_at <= now() AS expired, resource_id,
                          resource_attempt, response_status, response_body
                   FROM idempotency_keys WHERE account_id = $1 AND key = $2 FOR UPDATE`,
            values: [accountId, key],
          });
          const row = rows[0];
          if (!row) return null;
          const take = async (fresh: boolean) => {
            await client.query({
              name: fresh ? 'idem_renew' : 'idem_take_over',
              text: fresh
                ? `UPDATE idempotency_keys SET fingerprint = $3, lock_token = $4,
                     locked_until = now() + $5 * interval '1 millisecond', resource_id = NULL, resource_attempt = NULL,
                     response_status = NULL, response_body = NULL, created_at = now(),
                     expires_at = now() + $6 * interval '1 millisecond'
                   WHERE account_id = $1 AND key = $2`
                : `UPDATE idempotency_keys SET lock_token = $3, locked_until = now() + $4 * interval '1 millisecond'
                   WHERE account_id = $1 AND key = $2`,
              values: fresh
                ? [accountId, key, fingerprint, token, leaseMs, ttlMs]
                : [accountId, key, token, leaseMs],
            });
          };
          // Past its 24 hours a key is new again, whether or not the clean-up has removed it yet.
          if (row.expired) {
            await take(true);
            return { kind: 'claimed', token, resourceId: null, resourceAttempt: null };
          }
          if (row.fingerprint !== fingerprint) return { kind: 'reused' };
          if (row.response_status !== null && row.response_body !== null) {
            return { kind: 'replay', status: row.response_status, body: row.response_body };
          }
          if (row.locked) return { kind: 'in_use' };
          // The holder's lease ran out without an answer: it crashed (or lost its lease). This request takes
          // over and resumes from what the holder made, if anything.
          await take(false);
          return {
            kind: 'claimed',
            token,
            resourceId: row.resource_id,
            resourceAttempt: row.resource_attempt,
          };
        });
        if (outcome) return outcome;
      }
      return { kind: 'in_use' };
    },

    /** Stores the answer (when the holder still holds the key). False when the lease was lost. */
    async complete(write: TIdempotencyWrite & { status: number; body: string }): Promise<boolean> {
      const { rowCount } = await pool.query({
        name: 'idem_complete',
        text: `UPDATE idempotency_keys SET response_status = $4, response_body = $5, lock_token = NULL
               WHERE account_id = $1 AND key = $2 AND lock_token = $3`,
        values: [write.accountId, write.key, write.token, write.status, write.body],
      });
      return rowCount === 1;
    },

    /**
     * The holder answered without an answer worth keeping (a 5xx, a 429): a key that made nothing is
     * forgotten, so the retry runs afresh; one whose resource exists is left for the retry to resume now.
     */
    async release(accountId: string, key: string, token: string): Promise<void> {
      await pool.query({
        name: 'idem_release',
        text: `WITH gone AS (
                 DELETE FROM idempotency_keys
                 WHERE account_id = $1 AND key = $2 AND lock_token = $3 AND resource_id IS NULL
               )
               UPDATE idempotency_keys SET lock_token = NULL, locked_until = now()
               WHERE account_id = $1 AND key = $2 AND lock_token = $3 AND resource_id IS NOT NULL`,
        values: [accountId, key, token],
      });
    },

    /** Removes up to `limit` expired keys (oldest first); returns how many went. */
    async deleteExpired(limit: number): Promise<number> {
      const { rowCount } = await pool.query({
        name: 'idem_delete_expired',
        text: `DELETE FROM idempotency_keys WHERE ctid IN (
                 SELECT ctid FROM idempotency_keys WHERE expires_at <= now() ORDER BY expires_at LIMIT $1)`,
        values: [limit],
      });
      return rowCount ?? 0;
    },
  };
}

export type TIdempotencyRepository = ReturnType<typeof createIdempotencyRepository>;
