import type { TPlatform, TPostRecord } from '@sps/core';
import type { TLoadedPost } from '@sps/db';
import { parsePayload } from '@sps/queue';
import { type Job, UnrecoverableError } from 'bullmq';
import type { TPublisherContext } from './context.js';
import {
  MAX_NETWORK_WAIT_MS,
  NetworkWaitError,
  ProcessingWaitError,
  RetryLaterError,
} from './publish-errors.js';
import { LaneFullError, type TLanePlace, type TPublishLanes } from './publish-lanes.js';
import { publishNetwork } from './publish-network.js';
import { failTarget, type TNetworkOutcome } from './target-outcomes.js';

export {
  MAX_FREE_RATE_LIMIT_WAITS,
  MAX_NETWORK_WAIT_MS,
  NetworkWaitError,
  ProcessingWaitError,
  publishBackoff,
  RetryLaterError,
} from './publish-errors.js';

function isFinalAttempt(job: Job): boolean {
  return job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
}

/**
 * When the post came due: its scheduled time on the first attempt of a post whose schedule (or queue slot)
 * fired, else when this publish job was requested (a publish now, a retry, a scheduled post published early).
 * BullMQ keeps a job's timestamp across its retries, so those count toward the latency.
 */
export function publishDueAt(post: TPostRecord, attempt: number, jobTimestamp: number): number {
  const scheduled = post.scheduledFor?.getTime();
  if (scheduled !== undefined && attempt === 1 && scheduled <= jobTimestamp) return scheduled;
  return jobTimestamp;
}

/**
 * One attempt of a post: every pending network in parallel, results recorded as each completes, the
 * post finalized once all are done. Re-reads everything from PostgreSQL, so a retried, stalled or
 * duplicated job is harmless: a stale attempt does nothing and a sent segment is never sent again.
 */
export async function processPublish(
  ctx: TPublisherContext,
  job: Job,
  /** The post as its start left it, when the caller has it (a prepared post): no re-read then. */
  preloaded?: TLoadedPost,
  /** The fair lanes of the slot pool this runs in (publish-lanes.ts); none: no lanes. */
  lanes?: TPublishLanes,
): Promise<{ status: string }> {
  const payload = parsePayload('publish', job.data);
  if (!payload) throw new UnrecoverableError('Malformed publish payload');
  const loaded = preloaded ?? (await ctx.publishing.loadForPublish(payload.postId));
  if (!loaded || loaded.deletedAt) return { status: 'post_gone' };
  const { post } = loaded;
  if (post.status !== 'publishing' || post.publishAttempt !== payload.attempt) return { status: 'stale' };
  // Ids and counts only: post content and tokens never reach the logs. Made only when a line is written:
  // a child logger per job was a measurable share of the publisher's CPU (docs/performance.md).
  const log = () => ctx.logger.child({ jobId: job.id, postId: post.id, attempt: payload.attempt });

  const finalAttempt = isFinalAttempt(job);
  const dueAt = publishDueAt(post, payload.attempt, job.timestamp);
  const pending = post.targets
    .filter((t) => t.status === 'pending' || t.status === 'publishing')
    .map((t) => t.platform);
  // A single pending network ends the attempt with its own result (one transaction, not two); with
  // several, the last to finish cannot see the others' uncommitted results, so finalize runs after all.
  const finalizeAttempt = pending.length === 1 ? payload.attempt : null;
  // Networks whose lane is full: not tried now; the job comes back for them (no attempt counted).
  const deferred: TPlatform[] = [];
  const outcomes = await Promise.all(
    pending.map(async (platform): Promise<TNetworkOutcome> => {
      let place: TLanePlace | null = null;
      try {
        if (lanes) {
          place = await lanes.acquire(platform, loaded.targetAccounts[platform] ?? undefined);
          if (!place) {
            deferred.push(platform);
            return { retry: false };
          }
        }
        return await publishNetwork(ctx, loaded, platform, finalAttempt, dueAt, finalizeAttempt);
      } catch (error) {
        // A bug or a database hiccup in one network must not lose the others' results.
        log().error({ err: error, platform }, 'network publish crashed');
        if (finalAttempt) {
          await failTarget(
            ctx,
            post.id,
            platform,
            `Publishing to ${platform} failed unexpectedly. Use retry to try again.`,
            'transient',
          );
          return { retry: false } as const;
        }
        ctx.metrics.publishRetry(platform, 'transient');
        return { retry: true, retryAfterMs: undefined, message: `${platform}: internal error` } as const;
      } finally {
        await place?.release();
      }
    }),
  );
  await expireAccounts(ctx, loaded, pending, outcomes);

  const folded = outcomes.map((o) => (o.retry ? null : o.finalized)).find(Boolean);
  if (!folded && lanes && deferred.length > 0) {
    // Some network still waits for its lane, so the attempt cannot end: the job comes back after the lane
    // wait (or a retrying network's own wait, when longer) without spending an attempt. A network waiting
    // for its media processing is only checked once more, earlier than planned: its wait is not kept.
    const waits = outcomes.map((o) =>
      o.retry && !o.processing ? (o.retryAfterMs ?? ctx.options.backoffBaseMs) : 0,
    );
    // Touched now and then (not on every turn), so the reconciler does not take it for a lost job.
    if (Date.now() - post.updatedAt.getTime() > ctx.options.stuckAfterMs / 3)
      await ctx.publishing.touch(post.id);
    throw new LaneFullError(
      `lane full: ${deferred.join(', ')}`,
      Math.max(lanes.retryDelay(Date.now() - job.timestamp), ...waits),
      deferred,
    );
  }
  const finalized = folded ?? (await ctx.publishing.finalize(post.id, payload.attempt));
  if (finalized) {
    // Debug, not info: a line per post was 5% of the publisher's CPU; the post.published / post.failed
    // event and the metrics carry the outcome.
    if (ctx.logger.isLevelEnabled('debug'))
      log().debug({ status: finalized.status, networks: pending.length }, 'publish finished');
    return { status: finalized.status };
  }
  const retries = outcomes.filter((o): o is Extract<TNetworkOutcome, { retry: true }> => o.retry);
  if (retries.length > 0) {
    const message = retries.map((r) => r.message).join('; ');
    if (retries.every((r) => r.processing)) {
      // Only media processing is left: check again at the earliest network's time, in a delayed job.
      const waitMs = Math.min(...retries.map((r) => r.retryAfterMs ?? 0));
      await ctx.publishing.waitUntil(post.id, new Date(Date.now() + waitMs));
      log().debug({ waitMs }, 'publish waits for media processing');
      throw new ProcessingWaitError(message, waitMs);
    }
    // A network asked for a wait (rate limit, retry-after): the retry's delay is kept in PostgreSQL too.
    const waits = retries
      .filter((r) => !r.processing)
      .map((r) => r.retryAfterMs)
      .filter((w): w is number => w !== undefined);
    const retryAfterMs = waits.length > 0 ? Math.min(Math.max(...waits), MAX_NETWORK_WAIT_MS) : undefined;
    if (retryAfterMs !== undefined) {
      await ctx.publishing.waitUntil(post.id, new Date(Date.now() + retryAfterMs));
    } else {
      await ctx.publishing.touch(post.id);
    }
    if (retryAfterMs !== undefined && retries.every((r) => r.processing || r.rateLimited || r.leased)) {
      // Only waits the networks asked for are left: the job is delayed to the longest, no attempt spent.
      log().debug({ waitMs: retryAfterMs }, 'publish waits for a rate limit');
      throw new NetworkWaitError(message, retryAfterMs);
    }
    log().debug({ retrying: message, attemptsMade: job.attemptsMade }, 'publish attempt will be retried');
    throw new RetryLaterError(message, retryAfterMs);
  }
  return { status: 'publishing' };
}

/** An expired token marks the connected account inactive and needing re-authorisation (emits account.disconnected). */
async function expireAccounts(
  ctx: TPublisherContext,
  loaded: TLoadedPost,
  platforms: TPlatform[],
  outcomes: TNetworkOutcome[],
) {
  for (const [i, outcome] of outcomes.entries()) {
    const platform = platforms[i];
    if (!platform || outcome.retry || !outcome.expired) continue;
    const account = loaded.accounts.find((a) => a.id === loaded.targetAccounts[platform]);
    if (account?.isActive) await ctx.socialAccounts.disconnect(account.accountId, account.id, 'expired');
  }
}
