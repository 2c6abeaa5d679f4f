import { randomUUID } from 'node:crypto';
import {
  presentPostB,
  resolvePostOutcome,
  type TPlatform,
  type TPostRecord,
  type TPostStatus,
  type TTargetStatus,
} from '@sps/core';
import { inSqlTransaction, sqlOf, type TDb, type TTx } from './client.js';
import { recordEvent, recordEventSql } from './event-repository.js';
import type { SegmentDeliveryModel } from './generated/prisma/models/SegmentDelivery.js';
import { POST_INCLUDE, toPostRecord } from './post-mapper.js';
import { POST_COLUMNS, POST_TARGETS, postFromSql, type TPostSqlRow, targetsFrom, UUID } from './post-sql.js';

export type TBeginOutcome =
  | { kind: 'started'; attempt: number; post: TPostRecord }
  | { kind: 'not_found' }
  | { kind: 'not_publishable'; status: TPostStatus }
  | { kind: 'changed' }
  | { kind: 'nothing_to_retry' };

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
}

export interface TSegmentRef {
  segmentIndex: number;
  status: SegmentDeliveryModel['status'];
  remoteId: string | null;
  remoteUrl: string | null;
  meta: Record<string, string> | null;
  attempts: number;
}

export interface TTargetUpdate {
  status: TTargetStatus;
  remotePostId?: string | null;
  remoteUrl?: string | null;
  error?: string | null;
  errorKind?: string | null;
}

/** A connected account as the publisher reads it (credentials still sealed). */
export interface TPublishAccount {
  id: string;
  accountId: string;
  platform: string;
  accountName: string;
  externalId: string | null;
  instanceUrl: string | null;
  credentialsEncrypted: string;
  isActive: boolean;
}

interface TSegmentJson {
  platform: string;
  segmentIndex: number;
  status: SegmentDeliveryModel['status'];
  remoteId: string | null;
  remoteUrl: string | null;
  meta: Record<string, string> | null;
  attempts: number;
}

export interface TLoadedPost {
  post: TPostRecord;
  deletedAt: Date | null;
  /** The social account each network publishes with. */
  targetAccounts: Partial<Record<TPlatform, string | null>>;
  accounts: TPublishAccount[];
  segments: (TSegmentRef & { platform: TPlatform })[];
}

/** An update of a row that must exist (as Prisma's `update` by unique key, which throws P2025 otherwise). */
async function updateExactlyOne(db: TDb, name: string, text: string, values: unknown[]): Promise<void> {
  const result = await sqlOf(db).query({ name, text, values });
  if (result.rowCount !== 1) throw new Error(`Expected to update one row, updated ${result.rowCount ?? 0}`);
}

async function lockPost(tx: TTx, postId: string, accountId?: string) {
  const rows = accountId
    ? await tx.$queryRaw<{ id: string }[]>`
        SELECT id FROM posts WHERE id = ${postId}::uuid AND account_id = ${accountId}::uuid AND deleted_at IS NULL FOR UPDATE`
    : await tx.$queryRaw<
        { id: string }[]
      >`SELECT id FROM posts WHERE id = ${postId}::uuid AND deleted_at IS NULL FOR UPDATE`;
  if (rows.length === 0) return null;
  return tx.post.findUnique({ where: { id: postId }, include: POST_INCLUDE });
}

export function createPublishRepository(db: TDb) {
  return {
    /**
     * Moves a post to `publishing`: one pending target per network (with its account), a new attempt
     * number (part of the job id). Targets of networks no longer listed are dropped.
     */
    async begin(input: TBeginPublish): Promise<TBeginOutcome> {
      // One plain-SQL statement: the row lock, the checks, every write and the post as it is afterwards
      // come back in one round trip (publishing is the hot path; a transaction held a pooled connection
      // across a dozen round trips, and each Prisma query costs about a millisecond of CPU).
      // Targets of networks no longer listed are dropped; segments a network already holds (a thread cut
      // short by a failure) are kept, so they are never sent twice.
      if (!UUID.test(input.postId)) return { kind: 'not_found' } as const;
      // The application's clock, like every other timestamp the reconciler compares (not the database's).
      const now = new Date();
      const { rows } = await sqlOf(db).query<
        Omit<TPostSqlRow, 'id'> & { id: string | null; locked_status: string }
      >({
        name: 'publish_begin',
        text: `WITH locked AS (
          SELECT id, status, updated_at, platforms FROM posts
          WHERE id = $1 AND account_id = $2 AND deleted_at IS NULL
          FOR UPDATE
        ), ok AS (
          SELECT id, platforms FROM locked
          WHERE status::text = ANY($3::text[]) AND ($4::timestamptz IS NULL OR updated_at = $4::timestamptz)
        ), dropped_targets AS (
          DELETE FROM post_targets t USING ok WHERE t.post_id = ok.id AND t.platform <> ALL(ok.platforms)
        ), dropped_segments AS (
          DELETE FROM segment_deliveries s USING ok
          WHERE s.post_id = ok.id AND (s.platform <> ALL(ok.platforms) OR s.status <> 'sent')
        ), targets AS (
          INSERT INTO post_targets (id, post_id, platform, social_account_id, status, error, error_kind, updated_at)
          SELECT gen_random_uuid(), ok.id, pl, ($5::jsonb ->> pl::text)::uuid,
                 CASE WHEN pre.value IS NULL THEN 'pending' ELSE 'failed' END::"TargetStatus",
                 pre.value ->> 'error', pre.value ->> 'errorKind', $7
          FROM ok CROSS JOIN unnest(ok.platforms) AS pl
          LEFT JOIN jsonb_each($6::jsonb) AS pre ON pre.key = pl::text
          ON CONFLICT (post_id, platform) DO UPDATE SET
            social_account_id = EXCLUDED.social_account_id, status = EXCLUDED.status, remote_post_id = NULL,
            remote_url = NULL, error = EXCLUDED.error, error_kind = EXCLUDED.error_kind, published_at = NULL,
            updated_at = $7
          RETURNING *
        ), started AS (
          UPDATE posts SET status = 'publishing', publish_attempt = posts.publish_attempt + 1,
            queue_state = CASE WHEN $8 THEN NULL ELSE posts.queue_state END, updated_at = $7
          FROM ok WHERE posts.id = ok.id
          RETURNING posts.*
        )
        SELECT locked.status::text AS locked_status, ${POST_COLUMNS}, ${targetsFrom('targets')} AS targets
        FROM locked LEFT JOIN started p ON true`,
        values: [
          input.postId,
          input.accountId,
          input.from,
          input.expectUpdatedAt ?? null,
          JSON.stringify(input.accounts),
          JSON.stringify(input.preFailed ?? {}),
          now,
          input.clearQueue === true,
        ],
      });
      const row = rows[0];
      if (!row) return { kind: 'not_found' } as const;
      if (row.id === null) {
        const status = row.locked_status as TPostStatus;
        return input.from.includes(status)
          ? ({ kind: 'changed' } as const)
          : ({ kind: 'not_publishable', status } as const);
      }
      const post = postFromSql(row as TPostSqlRow);
      return { kind: 'started', attempt: post.publishAttempt, post } as const;
    },

    /** Whether a due post's twitter publish takes from the allowance, and the account's plan. */
    async allowanceOf(postId: string): Promise<{ counts: boolean; accountId: string; plan: string } | null> {
      const rows = await db.$queryRaw<{ counts: boolean; account_id: string; plan: string }[]>`
        SELECT p.counts_twitter_allowance AS counts, p.account_id, a.plan::text AS plan
        FROM posts p JOIN accounts a ON a.id = p.account_id WHERE p.id = ${postId}::uuid`;
      const row = rows[0];
      return row ? { counts: row.counts, accountId: row.account_id, plan: row.plan } : null;
    },

    /**
     * Sends again only what did not reach a network: failed and unknown targets go back to pending;
     * their segments without a remote id are forgotten (a person asked for the resend), sent ones stay.
     */
    async beginRetry(accountId: string, postId: string): Promise<TBeginOutcome> {
      return db.$transaction(async (tx) => {
        const row = await lockPost(tx, postId, accountId);
        if (!row) return { kind: 'not_found' } as const;
        if (row.status === 'publishing') return { kind: 'not_publishable', status: 'publishing' } as const;
        const retry = row.targets
          .filter((t) => t.status === 'failed' || t.status === 'unknown')
          .map((t) => t.platform);
        if (retry.length === 0 || (row.status !== 'published' && row.status !== 'failed')) {
          return { kind: 'nothing_to_retry' } as const;
        }
        await tx.segmentDelivery.deleteMany({
          where: { postId, platform: { in: retry }, NOT: { status: 'sent' } },
        });
        await tx.postTarget.updateMany({
          where: { postId, platform: { in: retry } },
          data: { status: 'pending', error: null, errorKind: null },
        });
        const updated = await tx.post.update({
          where: { id: postId },
          data: { status: 'publishing', publishAttempt: { increment: 1 } },
          include: POST_INCLUDE,
        });
        return { kind: 'started', attempt: updated.publishAttempt, post: toPostRecord(updated) } as const;
      });
    },

    /** Everything the publisher needs for one attempt, read fresh from PostgreSQL in one statement. */
    async loadForPublish(postId: string): Promise<TLoadedPost | null> {
      const { rows } = await sqlOf(db).query<
        TPostSqlRow & { segment_rows: TSegmentJson[]; account_rows: TPublishAccount[] }
      >({
        name: 'publish_load',
        text: `SELECT ${POST_COLUMNS}, ${POST_TARGETS},
           COALESCE((SELECT json_agg(json_build_object('platform', s.platform, 'segmentIndex', s.segment_index,
               'status', s.status, 'remoteId', s.remote_id, 'remoteUrl', s.remote_url, 'meta', s.remote_meta,
               'attempts', s.attempts))
             FROM segment_deliveries s WHERE s.post_id = p.id), '[]'::json) AS segment_rows,
           COALESCE((SELECT json_agg(json_build_object('id', a.id, 'accountId', a.account_id, 'platform', a.platform,
               'accountName', a.account_name, 'externalId', a.external_id, 'instanceUrl', a.instance_url,
               'credentialsEncrypted', a.credentials_encrypted, 'isActive', a.is_active))
             FROM social_accounts a
             WHERE a.id IN (SELECT t.social_account_id FROM post_targets t WHERE t.post_id = p.id)), '[]'::json)
             AS account_rows
         FROM posts p WHERE p.id = $1`,
        values: [postId],
      });
      const row = rows[0];
      if (!row) return null;
      return {
        post: postFromSql(row),
        deletedAt: row.deleted_at,
        targetAccounts: Object.fromEntries(
          row.targets.map((t) => [t.platform, t.socialAccountId]),
        ) as Partial<Record<TPlatform, string | null>>,
        accounts: row.account_rows,
        segments: row.segment_rows.map((s) => ({
          platform: s.platform as TPlatform,
          segmentIndex: s.segmentIndex,
          status: s.status,
          remoteId: s.remoteId,
          remoteUrl: s.remoteUrl,
          meta: s.meta,
          attempts: s.attempts,
        })),
      };
    },

    /** Write-ahead: the segment is about to be sent. A crash after this leaves `sending` = outcome unknown. */
    async markSending(
      postId: string,
      platform: TPlatform,
      segmentIndex: number,
      idempotencyKey: string,
    ): Promise<void> {
      await sqlOf(db).query({
        name: 'segment_sending',
        text: `INSERT INTO segment_deliveries (id, post_id, platform, segment_index, idempotency_key, status, attempts, updated_at)
         VALUES ($1, $2, $3, $4, $5, 'sending', 1, $6)
         ON CONFLICT (post_id, platform, segment_index) DO UPDATE SET
           status = 'sending', attempts = segment_deliveries.attempts + 1, error = NULL, updated_at = $6`,
        values: [randomUUID(), postId, platform, segmentIndex, idempotencyKey, new Date()],
      });
    },

    /** Recorded the moment the network answers, so the segment is never sent again. */
    async markSent(
      postId: string,
      platform: TPlatform,
      segmentIndex: number,
      remote: { remoteId: string; remoteUrl: string; meta?: Record<string, string> },
    ): Promise<void> {
      const now = new Date();
      await updateExactlyOne(
        db,
        'segment_sent',
        `UPDATE segment_deliveries SET status = 'sent', remote_id = $4, remote_url = $5, remote_meta = $6,
           sent_at = $7, updated_at = $7
         WHERE post_id = $1 AND platform = $2 AND segment_index = $3`,
        [
          postId,
          platform,
          segmentIndex,
          remote.remoteId,
          remote.remoteUrl,
          JSON.stringify(remote.meta ?? {}),
          now,
        ],
      );
    },

    async markSegment(
      postId: string,
      platform: TPlatform,
      segmentIndex: number,
      status: 'failed' | 'unknown',
      error: string,
    ): Promise<void> {
      await updateExactlyOne(
        db,
        'segment_mark',
        `UPDATE segment_deliveries SET status = $4::"SegmentStatus", error = $5, updated_at = $6
         WHERE post_id = $1 AND platform = $2 AND segment_index = $3`,
        [postId, platform, segmentIndex, status, error, new Date()],
      );
    },

    /** Per-network result, visible to clients as soon as that network completes. */
    async updateTarget(postId: string, platform: TPlatform, update: TTargetUpdate): Promise<void> {
      const now = new Date();
      // Columns not in the update keep their value (Prisma's `undefined` = leave as is).
      const keep = (value: string | null | undefined) => value === undefined;
      await updateExactlyOne(
        db,
        'target_update',
        `UPDATE post_targets SET status = $3::"TargetStatus",
           remote_post_id = CASE WHEN $4 THEN remote_post_id ELSE $5 END,
           remote_url = CASE WHEN $6 THEN remote_url ELSE $7 END,
           error = CASE WHEN $8 THEN error ELSE $9 END,
           error_kind = CASE WHEN $10 THEN error_kind ELSE $11 END,
           published_at = CASE WHEN $3::"TargetStatus" = 'succeeded' THEN $12 ELSE published_at END,
           attempts = attempts + 1, updated_at = $12
         WHERE post_id = $1 AND platform = $2`,
        [
          postId,
          platform,
          update.status,
          keep(update.remotePostId),
          update.remotePostId ?? null,
          keep(update.remoteUrl),
          update.remoteUrl ?? null,
          keep(update.error),
          update.error ?? null,
          keep(update.errorKind),
          update.errorKind ?? null,
          now,
        ],
      );
    },

    /**
     * Ends an attempt once every network finished: `published` when at least one succeeded, else
     * `failed`, with `post.published` / `post.failed` written in the same transaction. Idempotent: a
     * stale attempt or an already final post changes nothing.
     */
    async finalize(postId: string, attempt: number): Promise<TPostRecord | null> {
      // Plain SQL in one short transaction: lock and outcome inputs, the status change returning the post,
      // the outbox row (this runs once per post, on the hot path).
      return inSqlTransaction(db, async (client) => {
        const locked = await client.query<{
          status: string;
          publish_attempt: number;
          published_at: Date | null;
          targets: string[];
          first: Date | null;
        }>({
          name: 'finalize_lock',
          text: `SELECT p.status::text AS status, p.publish_attempt, p.published_at,
                  ARRAY(SELECT t.status::text FROM post_targets t WHERE t.post_id = p.id) AS targets,
                  (SELECT min(t.published_at) FROM post_targets t WHERE t.post_id = p.id) AS first
           FROM posts p WHERE p.id = $1 AND p.deleted_at IS NULL
           FOR UPDATE OF p`,
          values: [postId],
        });
        const row = locked.rows[0];
        if (row?.status !== 'publishing' || row.publish_attempt !== attempt) return null;
        const outcome = resolvePostOutcome(row.targets as TTargetStatus[]);
        if (outcome === 'publishing') return null;
        const publishedAt = outcome === 'published' && !row.published_at ? (row.first ?? new Date()) : null;
        const updated = await client.query<TPostSqlRow>({
          name: 'finalize_update',
          text: `UPDATE posts p SET status = $2::"PostStatus", published_at = COALESCE($3, p.published_at), updated_at = $4
           WHERE p.id = $1
           RETURNING ${POST_COLUMNS}, ${POST_TARGETS}`,
          values: [postId, outcome, publishedAt, new Date()],
        });
        const post = postFromSql(updated.rows[0] as TPostSqlRow);
        await recordEventSql(client, {
          accountId: post.accountId,
          type: outcome === 'published' ? 'post.published' : 'post.failed',
          data: { post: presentPostB(post) },
        });
        return post;
      });
    },

    /** A due post that cannot publish (no account, too long): every network failed with the reason. */
    async failBeforeSending(
      postId: string,
      from: TPostStatus,
      errors: Partial<Record<TPlatform, string>>,
    ): Promise<TPostRecord | null> {
      return db.$transaction(async (tx) => {
        const row = await lockPost(tx, postId);
        if (!row || row.status !== from) return null;
        for (const platform of row.platforms as TPlatform[]) {
          const fields = {
            status: 'failed' as const,
            error:
              errors[platform] ?? 'Not published because another network of this post could not be prepared.',
            errorKind: 'rejected',
          };
          await tx.postTarget.upsert({
            where: { postId_platform: { postId, platform } },
            create: { postId, platform, ...fields },
            update: fields,
          });
        }
        const updated = await tx.post.update({
          where: { id: postId },
          data: { status: 'failed', queueState: null },
          include: POST_INCLUDE,
        });
        const post = toPostRecord(updated);
        await recordEvent(tx, {
          accountId: post.accountId,
          type: 'post.failed',
          data: { post: presentPostB(post) },
        });
        return post;
      });
    },

    /** Posts in `publishing` untouched for a while: their job may be lost (reconciler). */
    stuckPublishing(olderThan: Date, limit = 500) {
      return db.post.findMany({
        where: { status: 'publishing', deletedAt: null, updatedAt: { lt: olderThan } },
        select: { id: true, publishAttempt: true },
        take: limit,
      });
    },

    /** Scheduled posts due before `until` (reconciler and Redis-loss recovery). */
    scheduledBefore(until: Date, limit = 5000) {
      return db.post.findMany({
        where: { status: 'scheduled', deletedAt: null, scheduledFor: { lte: until } },
        select: { id: true, scheduledFor: true },
        orderBy: { scheduledFor: 'asc' },
        take: limit,
      });
    },

    /** Touch so the reconciler does not take a live attempt for a stuck one. */
    async touch(postId: string): Promise<void> {
      await sqlOf(db).query('UPDATE posts SET updated_at = $2 WHERE id = $1', [postId, new Date()]);
    },
  };
}

export type TPublishRepository = ReturnType<typeof createPublishRepository>;
