import {
  presentPostB,
  resolvePostOutcome,
  type TPlatform,
  type TPostRecord,
  type TPostStatus,
  type TTargetStatus,
} from '@sps/core';
import type { TDb, TTx } from './client.js';
import { recordEvent } from './event-repository.js';
import type { SegmentDeliveryModel } from './generated/prisma/models/SegmentDelivery.js';
import { POST_INCLUDE, toPostRecord } from './post-mapper.js';

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

/** Up to three tries, 100 ms apart: for reads whose failure would hide a change already committed. */
async function readAfterCommit<T>(read: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await read();
    } catch (error) {
      if (attempt >= 3) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
    }
  }
}

export function createPublishRepository(db: TDb) {
  return {
    /**
     * Moves a post to `publishing`: one pending target per network (with its account), a new attempt
     * number (part of the job id). Targets of networks no longer listed are dropped.
     */
    async begin(input: TBeginPublish): Promise<TBeginOutcome> {
      // One statement instead of an interactive transaction: the row lock, the checks and every write
      // happen in one round trip (publishing is the hot path; each Prisma query costs about a millisecond
      // of CPU and a transaction held a pooled connection across a dozen round trips).
      // Targets of networks no longer listed are dropped; segments a network already holds (a thread cut
      // short by a failure) are kept, so they are never sent twice.
      const expect = input.expectUpdatedAt ?? null;
      // The application's clock, like every other timestamp the reconciler compares (not the database's).
      const now = new Date();
      const rows = await db.$queryRaw<{ status: string; updated_at: Date; attempt: number | null }[]>`
        WITH locked AS (
          SELECT id, status, updated_at, platforms FROM posts
          WHERE id = ${input.postId}::uuid AND account_id = ${input.accountId}::uuid AND deleted_at IS NULL
          FOR UPDATE
        ), ok AS (
          SELECT id, platforms FROM locked
          WHERE status::text = ANY(${input.from}::text[])
            AND (${expect}::timestamptz IS NULL OR updated_at = ${expect}::timestamptz)
        ), dropped_targets AS (
          DELETE FROM post_targets t USING ok WHERE t.post_id = ok.id AND t.platform <> ALL(ok.platforms)
        ), dropped_segments AS (
          DELETE FROM segment_deliveries s USING ok
          WHERE s.post_id = ok.id AND (s.platform <> ALL(ok.platforms) OR s.status <> 'sent')
        ), targets AS (
          INSERT INTO post_targets (id, post_id, platform, social_account_id, status, error, error_kind, updated_at)
          SELECT gen_random_uuid(), ok.id, p, (${JSON.stringify(input.accounts)}::jsonb ->> p::text)::uuid,
                 CASE WHEN pre.value IS NULL THEN 'pending' ELSE 'failed' END::"TargetStatus",
                 pre.value ->> 'error', pre.value ->> 'errorKind', ${now}::timestamptz
          FROM ok CROSS JOIN unnest(ok.platforms) AS p
          LEFT JOIN jsonb_each(${JSON.stringify(input.preFailed ?? {})}::jsonb) AS pre ON pre.key = p::text
          ON CONFLICT (post_id, platform) DO UPDATE SET
            social_account_id = EXCLUDED.social_account_id, status = EXCLUDED.status, remote_post_id = NULL,
            remote_url = NULL, error = EXCLUDED.error, error_kind = EXCLUDED.error_kind, published_at = NULL,
            updated_at = ${now}::timestamptz
        ), started AS (
          UPDATE posts SET status = 'publishing', publish_attempt = posts.publish_attempt + 1,
            queue_state = CASE WHEN ${input.clearQueue === true} THEN NULL ELSE posts.queue_state END,
            updated_at = ${now}::timestamptz
          FROM ok WHERE posts.id = ok.id
          RETURNING posts.publish_attempt
        )
        SELECT locked.status::text AS status, locked.updated_at, (SELECT publish_attempt FROM started) AS attempt
        FROM locked`;
      const row = rows[0];
      if (!row) return { kind: 'not_found' } as const;
      if (row.attempt === null) {
        return input.from.includes(row.status as TPostStatus)
          ? ({ kind: 'changed' } as const)
          : ({ kind: 'not_publishable', status: row.status as TPostStatus } as const);
      }
      // Read after the commit and before the job is enqueued, so the answer shows the attempt just started.
      // The publish has started now: a failing read is tried again rather than reported as a failed start
      // (the caller would then neither enqueue the job nor keep the post).
      const post = await readAfterCommit(() =>
        db.post.findUnique({ where: { id: input.postId }, include: POST_INCLUDE }),
      );
      if (!post) return { kind: 'not_found' } as const;
      return { kind: 'started', attempt: row.attempt, post: toPostRecord(post) } as const;
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

    /** Everything the publisher needs for one attempt, read fresh from PostgreSQL. */
    async loadForPublish(postId: string) {
      const row = await db.post.findUnique({
        where: { id: postId },
        include: {
          ...POST_INCLUDE,
          segmentDeliveries: true,
        },
      });
      if (!row) return null;
      const accountIds = row.targets.map((t) => t.socialAccountId).filter((id): id is string => id !== null);
      const accounts = await db.socialAccount.findMany({ where: { id: { in: accountIds } } });
      return {
        post: toPostRecord(row),
        deletedAt: row.deletedAt,
        targetAccounts: Object.fromEntries(
          row.targets.map((t) => [t.platform, t.socialAccountId]),
        ) as Partial<Record<TPlatform, string | null>>,
        accounts,
        segments: row.segmentDeliveries.map((s) => ({
          platform: s.platform as TPlatform,
          segmentIndex: s.segmentIndex,
          status: s.status,
          remoteId: s.remoteId,
          remoteUrl: s.remoteUrl,
          meta: (s.remoteMeta ?? null) as Record<string, string> | null,
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
      await db.segmentDelivery.upsert({
        where: { postId_platform_segmentIndex: { postId, platform, segmentIndex } },
        create: { postId, platform, segmentIndex, idempotencyKey, status: 'sending', attempts: 1 },
        update: { status: 'sending', attempts: { increment: 1 }, error: null },
      });
    },

    /** Recorded the moment the network answers, so the segment is never sent again. */
    async markSent(
      postId: string,
      platform: TPlatform,
      segmentIndex: number,
      remote: { remoteId: string; remoteUrl: string; meta?: Record<string, string> },
    ): Promise<void> {
      await db.segmentDelivery.update({
        where: { postId_platform_segmentIndex: { postId, platform, segmentIndex } },
        data: {
          status: 'sent',
          remoteId: remote.remoteId,
          remoteUrl: remote.remoteUrl,
          remoteMeta: remote.meta ?? {},
          sentAt: new Date(),
        },
      });
    },

    async markSegment(
      postId: string,
      platform: TPlatform,
      segmentIndex: number,
      status: 'failed' | 'unknown',
      error: string,
    ): Promise<void> {
      await db.segmentDelivery.update({
        where: { postId_platform_segmentIndex: { postId, platform, segmentIndex } },
        data: { status, error },
      });
    },

    /** Per-network result, visible to clients as soon as that network completes. */
    async updateTarget(postId: string, platform: TPlatform, update: TTargetUpdate): Promise<void> {
      await db.postTarget.update({
        where: { postId_platform: { postId, platform } },
        data: {
          ...update,
          attempts: { increment: 1 },
          ...(update.status === 'succeeded' ? { publishedAt: new Date() } : {}),
        },
      });
    },

    /**
     * Ends an attempt once every network finished: `published` when at least one succeeded, else
     * `failed`, with `post.published` / `post.failed` written in the same transaction. Idempotent: a
     * stale attempt or an already final post changes nothing.
     */
    async finalize(postId: string, attempt: number): Promise<TPostRecord | null> {
      return db.$transaction(async (tx) => {
        // The lock and what the outcome needs in one statement (this runs once per post, on the hot path).
        const rows = await tx.$queryRaw<
          {
            status: string;
            publish_attempt: number;
            published_at: Date | null;
            targets: string[];
            first: Date | null;
          }[]
        >`
          SELECT p.status::text AS status, p.publish_attempt, p.published_at,
                 ARRAY(SELECT t.status::text FROM post_targets t WHERE t.post_id = p.id) AS targets,
                 (SELECT min(t.published_at) FROM post_targets t WHERE t.post_id = p.id) AS first
          FROM posts p WHERE p.id = ${postId}::uuid AND p.deleted_at IS NULL
          FOR UPDATE OF p`;
        const row = rows[0];
        if (row?.status !== 'publishing' || row.publish_attempt !== attempt) return null;
        const outcome = resolvePostOutcome(row.targets as TTargetStatus[]);
        if (outcome === 'publishing') return null;
        const updated = await tx.post.update({
          where: { id: postId },
          data: {
            status: outcome,
            ...(outcome === 'published' && !row.published_at ? { publishedAt: row.first ?? new Date() } : {}),
          },
          include: POST_INCLUDE,
        });
        const post = toPostRecord(updated);
        await recordEvent(tx, {
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
      await db.post.updateMany({ where: { id: postId }, data: { updatedAt: new Date() } });
    },
  };
}

export type TPublishRepository = ReturnType<typeof createPublishRepository>;
