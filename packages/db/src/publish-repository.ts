import { presentPostB, type TPlatform, type TPostRecord, type TPostStatus } from '@sps/core';
import { sqlOf, type TDb, type TTx } from './client.js';
import { recordEvent } from './event-repository.js';
import { POST_INCLUDE, toPostRecord } from './post-mapper.js';
import { createPublishBatches } from './publish-batches.js';
import { createPublishBegin, type TBeginOutcome } from './publish-begin.js';
import { createPublishPrepare } from './publish-prepare.js';

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
    ...createPublishBegin(db),
    ...createPublishPrepare(db),

    /**
     * Moves a post to `publishing`: one pending target per network (with its account), a new attempt
     * number (part of the job id). Targets of networks no longer listed are dropped.
     */
    /** Whether a due post's twitter publish takes from the allowance, and the account's plan. */
    async allowanceOf(postId: string): Promise<{ counts: boolean; accountId: string; plan: string } | null> {
      const rows = await db.$queryRaw<{ counts: boolean; account_id: string; plan: string }[]>`
        SELECT p.counts_twitter_allowance AS counts, p.account_id, a.plan::text AS plan
        FROM posts p JOIN accounts a ON a.id = p.account_id WHERE p.id = ${postId}::uuid`;
      const row = rows[0];
      return row ? { counts: row.counts, accountId: row.account_id, plan: row.plan } : null;
    },

    /**
     * Sends again only what did not reach a network: failed and unknown targets go back to pending. Failed
     * segments are forgotten; segments whose outcome is unknown stay `unknown`, which tells the next attempt
     * that a person asked: it reads the network back first and sends only what is not there (or what the
     * network cannot be asked about). Sent segments stay.
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
          where: { postId, platform: { in: retry }, status: 'failed' },
        });
        await tx.segmentDelivery.updateMany({
          where: { postId, platform: { in: retry }, status: 'sending' },
          data: { status: 'unknown' },
        });
        await tx.postTarget.updateMany({
          where: { postId, platform: { in: retry } },
          data: { status: 'pending', error: null, errorKind: null },
        });
        const updated = await tx.post.update({
          where: { id: postId },
          // A new attempt starts without an earlier attempt's wait (the reconciler reads wait_until).
          data: { status: 'publishing', publishAttempt: { increment: 1 }, waitUntil: null },
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
        select: { id: true, publishAttempt: true, waitUntil: true },
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

    /**
     * Moves the lease of a claim this run holds (`attempts`: the count its claim wrote) to `until`: later
     * while its connector call runs, now when the call ended and the row stays `sending`. False when the
     * claim is not this run's any more (sent, failed, claimed again) or the row is gone.
     */
    async renewClaim(
      postId: string,
      platform: TPlatform,
      segmentIndex: number,
      attempts: number,
      until: Date,
    ): Promise<boolean> {
      const result = await sqlOf(db).query({
        name: 'segment_claim_renew',
        text: `UPDATE segment_deliveries SET claimed_until = $5
               WHERE post_id = $1 AND platform = $2::"Platform" AND segment_index = $3 AND attempts = $4
                 AND status = 'sending'`,
        values: [postId.toLowerCase(), platform, segmentIndex, attempts, until],
      });
      return result.rowCount === 1;
    },

    /**
     * A connector's resumable progress (upload session, publish id) on a segment not yet sent, so the next
     * attempt resumes the same remote work. A sent segment keeps the ids its replies need instead.
     */
    async saveProgress(
      postId: string,
      platform: TPlatform,
      segmentIndex: number,
      progress: Record<string, string> | null,
    ): Promise<void> {
      await sqlOf(db).query(
        `UPDATE segment_deliveries SET remote_meta = $4::jsonb, updated_at = $5
         WHERE post_id = $1 AND platform = $2 AND segment_index = $3 AND status <> 'sent'`,
        [postId, platform, segmentIndex, progress === null ? null : JSON.stringify(progress), new Date()],
      );
    },

    /**
     * Which of `remoteIds` the service already recorded on this network for another segment (of this post or
     * another) posted as the same network identity (the account's external id: a channel, a page, a user):
     * a read-back never takes one of those for a lost segment.
     */
    async claimedRemoteIds(input: {
      platform: TPlatform;
      externalId: string | null;
      remoteIds: string[];
      postId: string;
      segmentIndex: number;
    }): Promise<Set<string>> {
      if (input.remoteIds.length === 0) return new Set();
      const { rows } = await sqlOf(db).query<{ remote_id: string }>({
        name: 'segment_claimed_ids',
        text: `SELECT DISTINCT s.remote_id FROM segment_deliveries s
               JOIN post_targets t ON t.post_id = s.post_id AND t.platform = s.platform
               JOIN social_accounts a ON a.id = t.social_account_id
               WHERE s.platform = $1::"Platform" AND s.remote_id = ANY ($2::text[])
                 AND a.external_id IS NOT DISTINCT FROM $3
                 AND NOT (s.post_id = $4::uuid AND s.segment_index = $5)`,
        values: [
          input.platform,
          input.remoteIds.slice(0, 500),
          input.externalId,
          input.postId.toLowerCase(),
          input.segmentIndex,
        ],
      });
      return new Set(rows.map((r) => r.remote_id));
    },

    /** Touch so the reconciler does not take a live attempt for a stuck one. */
    async touch(postId: string): Promise<void> {
      await sqlOf(db).query('UPDATE posts SET updated_at = $2 WHERE id = $1', [postId, new Date()]);
    },

    /**
     * The attempt's job waits until `until` (media processing, a rate limit): recorded with the touch, so the
     * reconciler re-adds a lost job delayed to that time instead of at once (DESIGN invariant 10).
     */
    async waitUntil(postId: string, until: Date): Promise<void> {
      await sqlOf(db).query('UPDATE posts SET updated_at = $2, wait_until = $3 WHERE id = $1', [
        postId,
        new Date(),
        until,
      ]);
    },
  };
}

export type TPublishRepository = ReturnType<typeof createPublishRepository>;
