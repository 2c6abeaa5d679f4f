import { presentPostB, type TPlatform, type TPostRecord, type TPostStatus } from '@sps/core';
import { sqlOf, type TDb, type TTx } from './client.js';
import { recordEvent } from './event-repository.js';
import { POST_INCLUDE, toPostRecord } from './post-mapper.js';
import { POST_COLUMNS, postFromSql, type TPostSqlRow, targetsFrom, UUID } from './post-sql.js';
import { createPublishBatches } from './publish-batches.js';

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
    ...createPublishBatches(db),

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
