import { type TPlatform, type TPostRecord, type TPostStatus, UUID_PATTERN } from '@sps/core';
import { batchLoader } from './batch.js';
import { sqlOf, type TDb } from './client.js';
import type { TIdempotencyWrite } from './idempotency-repository.js';
import { POST_COLUMNS, postFromSql, type TPostSqlRow, targetsFrom } from './post-sql.js';

export type TBeginOutcome =
  | { kind: 'started'; attempt: number; post: TPostRecord }
  | { kind: 'not_found' }
  | { kind: 'not_publishable'; status: TPostStatus }
  | { kind: 'changed' }
  | { kind: 'nothing_to_retry' }
  /** The request's Idempotency-Key was taken over by a retry: nothing was started. */
  | { kind: 'key_lost' };

export interface TBeginPublish {
  accountId: string;
  postId: string;
  /** Statuses a publish may start from (draft/scheduled by request; scheduled when due). */
  from: TPostStatus[];
  /** One active social account per platform. */
  accounts: Partial<Record<TPlatform, string>>;
  /** The post version that was validated; a newer edit makes this `changed`. */
  expectUpdatedAt?: Date;
  /** Leaves the interval queue (a queued post taken by its slot). */
  clearQueue?: boolean;
  /** Networks that fail before anything is sent, with the reason (a used-up twitter allowance). */
  preFailed?: Partial<Record<TPlatform, { error: string; errorKind: string }>>;
  /**
   * A request under an Idempotency-Key: the publish starts only while it holds the key, and the key records
   * the post and its attempt in the same statement.
   */
  idempotency?: TIdempotencyWrite;
}

type TBeginRow = Omit<TPostSqlRow, 'id'> & {
  id: string | null;
  locked_id: string;
  locked_status: string;
  key_lost: boolean;
};

/**
 * Moves posts to `publishing` in one plain-SQL statement per batch of concurrent requests (see
 * batchLoader): the row locks (in id order), the status and version checks, one target per network with
 * its account (or the reason it failed before sending), a new attempt number (part of the job id), and the
 * posts as they are afterwards. Targets of networks no longer listed are dropped; segments a network
 * already holds (a thread cut short by a failure) are kept, so they are never sent twice, and so are
 * segments whose outcome is unknown (the publisher reads the network back before sending them), including
 * one left `sending` by an attempt that gave up or failed after the network accepted it: it becomes
 * `unknown`, as a retry makes it. Each request is
 * checked against its own account, statuses and version; the same post twice in one batch goes to a later
 * round, which then sees the first one's outcome.
 */
export function createPublishBegin(db: TDb) {
  const begins = batchLoader<TBeginPublish, TBeginOutcome>(
    async (round) => {
      // The application's clock, like every other timestamp the reconciler compares (not the database's).
      const now = new Date();
      const { rows } = await sqlOf(db).query<TBeginRow>({
        name: 'publish_begin_many',
        text: `WITH input AS (
          SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::timestamptz[], $5::jsonb[], $6::jsonb[], $7::bool[],
                               $9::text[], $10::uuid[])
            AS i(post_id, account_id, from_list, expect, accounts, pre_failed, clear_queue, idem_key, idem_token)
        ), fenced AS (
          -- Keys still held by their request (a retry that took one over changed its token); locked so no
          -- take-over happens before this statement commits.
          SELECT i.post_id FROM idempotency_keys k
          JOIN input i ON k.account_id = i.account_id AND k.key = i.idem_key AND k.lock_token = i.idem_token
          FOR UPDATE OF k
        ), locked AS (
          SELECT p.id, p.status, p.updated_at, p.platforms, i.from_list, i.expect, i.accounts, i.pre_failed,
                 i.clear_queue, i.account_id, i.idem_key,
                 (i.idem_key IS NOT NULL AND p.id NOT IN (SELECT post_id FROM fenced)) AS key_lost
          FROM posts p JOIN input i ON i.post_id = p.id AND i.account_id = p.account_id
          WHERE p.deleted_at IS NULL
          ORDER BY p.id
          FOR UPDATE OF p
        ), ok AS (
          SELECT * FROM locked
          WHERE status::text = ANY (string_to_array(from_list, ',')) AND (expect IS NULL OR updated_at = expect)
            AND NOT key_lost
        ), dropped_targets AS (
          DELETE FROM post_targets t USING ok WHERE t.post_id = ok.id AND t.platform <> ALL (ok.platforms)
        ), dropped_segments AS (
          DELETE FROM segment_deliveries s USING ok
          WHERE s.post_id = ok.id
            AND (s.platform <> ALL (ok.platforms) OR s.status NOT IN ('sent', 'unknown', 'sending'))
        ), doubted_segments AS (
          UPDATE segment_deliveries s SET status = 'unknown', updated_at = $8 FROM ok
          WHERE s.post_id = ok.id AND s.platform = ANY (ok.platforms) AND s.status = 'sending'
        ), targets AS (
          INSERT INTO post_targets (id, post_id, platform, social_account_id, status, error, error_kind, updated_at)
          SELECT gen_random_uuid(), ok.id, pl, (ok.accounts ->> pl::text)::uuid,
                 CASE WHEN pre.value IS NULL THEN 'pending' ELSE 'failed' END::"TargetStatus",
                 pre.value ->> 'error', pre.value ->> 'errorKind', $8
          FROM ok CROSS JOIN unnest(ok.platforms) AS pl
          LEFT JOIN LATERAL jsonb_each(ok.pre_failed) AS pre ON pre.key = pl::text
          ON CONFLICT (post_id, platform) DO UPDATE SET
            social_account_id = EXCLUDED.social_account_id, status = EXCLUDED.status, remote_post_id = NULL,
            remote_url = NULL, error = EXCLUDED.error, error_kind = EXCLUDED.error_kind, published_at = NULL,
            updated_at = $8
          RETURNING *
        ), started AS (
          UPDATE posts SET status = 'publishing', publish_attempt = posts.publish_attempt + 1, wait_until = NULL,
            queue_state = CASE WHEN ok.clear_queue THEN NULL ELSE posts.queue_state END, updated_at = $8
          FROM ok WHERE posts.id = ok.id
          RETURNING posts.*
        ), keyed AS (
          UPDATE idempotency_keys k SET resource_id = s.id, resource_attempt = s.publish_attempt
          FROM started s JOIN ok ON ok.id = s.id
          WHERE ok.idem_key IS NOT NULL AND k.account_id = ok.account_id AND k.key = ok.idem_key
        )
        SELECT locked.id AS locked_id, locked.status::text AS locked_status, locked.key_lost, ${POST_COLUMNS},
               ${targetsFrom('targets')} AS targets
        FROM locked LEFT JOIN started p ON p.id = locked.id`,
        values: [
          round.map((r) => r.postId),
          round.map((r) => r.accountId),
          round.map((r) => r.from.join(',')),
          round.map((r) => r.expectUpdatedAt ?? null),
          round.map((r) => JSON.stringify(r.accounts)),
          round.map((r) => JSON.stringify(r.preFailed ?? {})),
          round.map((r) => r.clearQueue === true),
          now,
          round.map((r) => r.idempotency?.key ?? null),
          round.map((r) => r.idempotency?.token ?? null),
        ],
      });
      const byId = new Map(rows.map((row) => [row.locked_id, row]));
      return round.map((input) => outcomeOf(input, byId.get(input.postId)));
    },
    (input) => input.postId,
  );

  return {
    begin(input: TBeginPublish): Promise<TBeginOutcome> {
      if (!UUID_PATTERN.test(input.postId)) return Promise.resolve({ kind: 'not_found' });
      // Answers are matched by the database's text form of the id.
      return begins.load({ ...input, postId: input.postId.toLowerCase() });
    },
  };
}

function outcomeOf(input: TBeginPublish, row: TBeginRow | undefined): TBeginOutcome {
  if (!row) return { kind: 'not_found' };
  if (row.id === null && row.key_lost) return { kind: 'key_lost' };
  if (row.id === null) {
    const status = row.locked_status as TPostStatus;
    return input.from.includes(status) ? { kind: 'changed' } : { kind: 'not_publishable', status };
  }
  const post = postFromSql(row as TPostSqlRow);
  return { kind: 'started', attempt: post.publishAttempt, post };
}
