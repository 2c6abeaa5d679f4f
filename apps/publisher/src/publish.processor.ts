import {
  planThreadDelivery,
  postTexts,
  storablePostUrl,
  type TMedia,
  type TPlatform,
  type TPostRecord,
} from '@sps/core';
import type { TLoadedPost } from '@sps/db';
import type { TNetworkFailure, TPublishInput, TRemoteRef } from '@sps/networks';
import { parsePayload } from '@sps/queue';
import { type Job, UnrecoverableError } from 'bullmq';
import type { TPublisherContext } from './context.js';
import { sendFirstComment } from './first-comment.js';
import { LaneFullError, type TLanePlace, type TPublishLanes } from './publish-lanes.js';
import { networkDone, readyToSend } from './publish-steps.js';
import { resolveUnanswered, settleDoubt, type TUnanswered } from './readback.js';
import { failTarget, type TNetworkOutcome } from './target-outcomes.js';

/** Thrown to make BullMQ retry the job later; carries the longest wait a network asked for. */
export class RetryLaterError extends Error {
  constructor(
    message: string,
    readonly retryAfterMs: number | undefined,
  ) {
    super(message);
    this.name = 'RetryLaterError';
  }
}

/**
 * Thrown when every network left in the attempt waits (for its media to be processed, or for a rate
 * limit's retry-after): the job is delayed (not retried: no attempt is spent) for `waitMs`, written to
 * `posts.wait_until` first so the reconciler rebuilds the wait after a Redis loss; the slot is free meanwhile.
 */
export class NetworkWaitError extends RetryLaterError {
  constructor(
    message: string,
    readonly waitMs: number,
  ) {
    super(message, waitMs);
    this.name = 'NetworkWaitError';
  }
}

/** A {@link NetworkWaitError} where only media processing is left. */
export class ProcessingWaitError extends NetworkWaitError {
  constructor(message: string, waitMs: number) {
    super(message, waitMs);
    this.name = 'ProcessingWaitError';
  }
}

/**
 * A rate limit with a retry-after is waited without spending one of the job's attempts while the segment
 * has been sent at most this many times (its durable `attempts` counter): a network that keeps answering
 * 429 still ends in the ordinary retries, and the post fails after them instead of waiting forever.
 */
export const MAX_FREE_RATE_LIMIT_WAITS = 20;

function segmentMedia(post: TPostRecord, index: number): TMedia | null {
  return index === 0 ? post.media : (post.segments?.[index - 1]?.media ?? null);
}

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

/** Publishes one network of the post, segment by segment; what a network already holds is skipped. */
async function publishNetwork(
  ctx: TPublisherContext,
  loaded: TLoadedPost,
  platform: TPlatform,
  finalAttempt: boolean,
  dueAt: number,
  /** Set when this is the attempt's only pending network: its success also ends the attempt. */
  finalizeAttempt: number | null,
): Promise<TNetworkOutcome> {
  const { post } = loaded;
  const ready = await readyToSend(ctx, loaded, platform, finalAttempt);
  if ('outcome' in ready) return ready.outcome;
  const { account, connector } = ready;
  let { credentials } = ready;
  let renewedAfter401 = false;
  let confirmedByReadback = false;
  const plan = planThreadDelivery(platform, postTexts(post));
  const refs = new Map<number, TRemoteRef & { url: string }>();
  const record = async (index: number, remote: TRemoteRef & { url: string }) => {
    await ctx.publishing.markSent(post.id, platform, index, {
      remoteId: remote.remoteId,
      remoteUrl: remote.url,
      ...(remote.meta ? { meta: remote.meta } : {}),
    });
    refs.set(index, remote);
  };
  // The last segment's answer is written with the network's result, in one statement (see below).
  let lastSent: { index: number; remote: TRemoteRef & { url: string } } | null = null;
  const lastIndex = plan[plan.length - 1]?.segmentIndex;
  // With a first comment the last segment is recorded before the comment goes out (not with the result).
  const commentAfter = post.firstComment !== null;

  for (const item of plan) {
    const existing = loaded.segments.find(
      (s) => s.platform === platform && s.segmentIndex === item.segmentIndex,
    );
    if (existing?.status === 'sent' && existing.remoteId) {
      refs.set(item.segmentIndex, {
        remoteId: existing.remoteId,
        url: existing.remoteUrl ?? '',
        ...(existing.meta ? { meta: existing.meta } : {}),
      });
      continue;
    }
    // Saved progress (an upload session, a publish id) means the connector resumes the same remote
    // work, which cannot create a second copy; without it an interrupted send may have posted.
    let progress = existing && existing.status !== 'sent' ? existing.meta : null;
    const idempotencyKey = `${post.id}-${platform}-${item.segmentIndex}`;
    const replyTo = item.replyToSegment === null ? null : (refs.get(item.replyToSegment) ?? null);
    const root = item.rootSegment === null ? null : (refs.get(item.rootSegment) ?? null);
    const media = segmentMedia(post, item.segmentIndex);
    const unanswered = (since: Date, lastSentAt: Date, personAsked: boolean): TUnanswered => ({
      postId: post.id,
      platform,
      account: credentials,
      segmentIndex: item.segmentIndex,
      text: item.text,
      replyTo,
      root,
      mediaCount: (media?.images.length ?? 0) + (media?.video ? 1 : 0),
      idempotencyKey,
      postCreatedAt: post.createdAt,
      since,
      lastSentAt,
      personAsked,
      finalAttempt,
    });
    if (existing && (existing.status === 'sending' || existing.status === 'unknown') && !progress) {
      // Sent before and never answered (a crash, a timeout, or a person's retry): ask the network first.
      const decision = await resolveUnanswered(
        ctx,
        unanswered(existing.createdAt, existing.lastSentAt, existing.status === 'unknown'),
      );
      if (decision.do === 'record') {
        await record(item.segmentIndex, decision.remote);
        confirmedByReadback = true;
        continue;
      }
      if (decision.do !== 'send') return settleDoubt(ctx, post.id, platform, item.segmentIndex, decision);
    }

    const since = existing?.createdAt ?? new Date();
    await ctx.publishing.markSending(post.id, platform, item.segmentIndex, idempotencyKey);
    // The settle wait counts from this send, not from the first write-ahead: a segment sent again (after a
    // 429, a crash, a stalled job) may still be being stored by the network.
    const sentAt = new Date();
    const input: Omit<TPublishInput, 'account'> = {
      text: item.text,
      media,
      poll: item.segmentIndex === 0 ? post.poll : null,
      replyTo,
      root,
      idempotencyKey,
      sentBefore: existing !== undefined,
      progress: {
        saved: progress,
        save: async (state) => {
          await ctx.publishing.saveProgress(post.id, platform, item.segmentIndex, state);
          progress = state;
        },
      },
      postCreatedAt: post.createdAt,
    };
    let outcome = await connector.publish({ ...input, account: credentials });
    if (!outcome.ok && outcome.failure.kind === 'auth_expired' && !renewedAfter401) {
      // A 401 gets one refresh and one retry of the same call before it counts as expired.
      renewedAfter401 = true;
      const renewed = await ctx.tokens.afterUnauthorized(account.id, credentials.token);
      if (renewed?.ok) {
        credentials = { ...credentials, token: renewed.token };
        outcome = await connector.publish({ ...input, account: credentials });
      }
    }
    if (!outcome.ok && outcome.pending) {
      // The network is still processing the media: the connector saved where it is and the segment stays
      // `sending` with that progress, which the next call resumes (never a read-back, never a second send).
      ctx.metrics.publishRetry(platform, 'processing');
      return {
        retry: true,
        processing: true,
        retryAfterMs: outcome.pending.checkAfterMs,
        message: `${platform}: processing`,
      };
    }
    if (outcome.ok) {
      const { remoteId, url, meta } = outcome;
      // The network's link is input too: only an https URL is kept (a self-hosted instance could answer anything).
      const remote = { remoteId, url: storablePostUrl(url), ...(meta ? { meta } : {}) };
      if (item.segmentIndex === lastIndex && !commentAfter) {
        // Nothing else runs before the result below, so the mark is written as soon as it would be alone.
        lastSent = { index: item.segmentIndex, remote };
        refs.set(item.segmentIndex, remote);
      } else {
        await record(item.segmentIndex, remote);
      }
      if (outcome.readBack) confirmedByReadback = true;
      continue;
    }
    if (outcome.failure.outcomeUnknown && !progress) {
      // The request left and no answer came: the network may hold it already (the timeout case).
      // A send refused as a duplicate posted nothing: the settle wait counts from the send before it.
      const lastSent = outcome.failure.duplicate && existing ? existing.lastSentAt : sentAt;
      const decision = await resolveUnanswered(ctx, unanswered(since, lastSent, false));
      if (decision.do === 'record') {
        await record(item.segmentIndex, decision.remote);
        confirmedByReadback = true;
        continue;
      }
      // Not there yet: the job asks again on its next attempt before anything is sent.
      if (decision.do !== 'send') return settleDoubt(ctx, post.id, platform, item.segmentIndex, decision);
    }
    const sends = (existing?.attempts ?? 0) + 1;
    return handleFailure(ctx, post, platform, item.segmentIndex, outcome.failure, finalAttempt, sends);
  }

  if (commentAfter && lastIndex !== undefined) {
    const comment = await sendFirstComment(ctx, loaded, platform, {
      connector,
      credentials,
      refs,
      lastIndex,
      finalAttempt,
    });
    if (comment) return comment.retry;
  }
  const finalized = await networkDone(ctx, post.id, platform, {
    first: refs.get(0),
    lastSent,
    confirmedByReadback,
    finalizeAttempt,
    dueAt,
  });
  return { retry: false, finalized };
}

async function handleFailure(
  ctx: TPublisherContext,
  post: TPostRecord,
  platform: TPlatform,
  segmentIndex: number,
  failure: TNetworkFailure,
  finalAttempt: boolean,
  /** Times the segment was sent, this send included. */
  sends: number,
): Promise<TNetworkOutcome> {
  // The network answered with an error: the segment did not go out, so it may be sent again. One whose
  // outcome is unknown (the read-back could not settle it yet) stays `sending`: it is asked about first.
  if (!failure.outcomeUnknown) {
    await ctx.publishing.markSegment(post.id, platform, segmentIndex, 'failed', failure.message);
  }
  if (failure.kind === 'auth_expired') {
    await failTarget(ctx, post.id, platform, failure.message, failure.kind);
    return { retry: false, expired: true };
  }
  if (
    failure.kind === 'rate_limited' &&
    failure.retryAfterMs !== undefined &&
    sends <= MAX_FREE_RATE_LIMIT_WAITS
  ) {
    // The network said when to come back: a wait like a processing one, not a failed attempt (even on the
    // job's last attempt).
    ctx.metrics.publishRetry(platform, failure.kind);
    return {
      retry: true,
      rateLimited: true,
      retryAfterMs: failure.retryAfterMs,
      message: `${platform}: ${failure.kind}`,
    };
  }
  if (failure.kind === 'rejected' || finalAttempt) {
    const message =
      finalAttempt && failure.kind !== 'rejected'
        ? `${failure.message} Gave up after several attempts; use retry to try again.`
        : failure.message;
    await failTarget(ctx, post.id, platform, message, failure.kind);
    return { retry: false };
  }
  ctx.metrics.publishRetry(platform, failure.kind);
  return { retry: true, retryAfterMs: failure.retryAfterMs, message: `${platform}: ${failure.kind}` };
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
    if (retryAfterMs !== undefined && retries.every((r) => r.processing || r.rateLimited)) {
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

/**
 * Retry delays: what the network asked for (up to a day and an hour: YouTube's daily quota resets at
 * midnight Pacific Time, up to 24 h away), else exponential from the base, capped at 5 minutes.
 */
export const MAX_NETWORK_WAIT_MS = 25 * 60 * 60_000;
export function publishBackoff(baseMs: number) {
  return (attemptsMade: number, _type?: string, err?: Error): number => {
    if (err instanceof RetryLaterError && err.retryAfterMs !== undefined)
      return Math.min(Math.max(err.retryAfterMs, 100), MAX_NETWORK_WAIT_MS);
    return Math.min(baseMs * 2 ** Math.max(0, attemptsMade - 1), 5 * 60_000);
  };
}
