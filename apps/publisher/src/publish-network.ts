import { planThreadDelivery, postTexts, type TMedia, type TPlatform, type TPostRecord } from '@sps/core';
import type { TLoadedPost } from '@sps/db';
import type { TNetworkFailure, TRemoteRef } from '@sps/networks';
import type { TPublisherContext } from './context.js';
import { sendFirstComment } from './first-comment.js';
import { MAX_FREE_RATE_LIMIT_WAITS } from './publish-errors.js';
import { networkDone, readyToSend } from './publish-steps.js';
import { settleDoubt } from './readback.js';
import { sendClaimedSegment, type TSendSession } from './send-segment.js';
import { failTarget, type TNetworkOutcome } from './target-outcomes.js';

// One network of one publish attempt (the use case under processPublish): its segments sent in order,
// each unanswered send settled by a read-back, a failure turned into a retry, a wait or a failed target.

function segmentMedia(post: TPostRecord, index: number): TMedia | null {
  return index === 0 ? post.media : (post.segments?.[index - 1]?.media ?? null);
}

/** Publishes one network of the post, segment by segment; what a network already holds is skipped. */
export async function publishNetwork(
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
  const session: TSendSession = {
    connector: ready.connector,
    credentials: ready.credentials,
    renewedAfter401: false,
  };
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
    const replyTo = item.replyToSegment === null ? null : (refs.get(item.replyToSegment) ?? null);
    const root = item.rootSegment === null ? null : (refs.get(item.rootSegment) ?? null);
    const sent = await sendClaimedSegment(ctx, session, {
      postId: post.id,
      platform,
      segmentIndex: item.segmentIndex,
      existing,
      input: {
        text: item.text,
        media: segmentMedia(post, item.segmentIndex),
        poll: item.segmentIndex === 0 ? post.poll : null,
        replyTo,
        root,
        idempotencyKey: `${post.id}-${platform}-${item.segmentIndex}`,
        sentBefore: existing !== undefined,
        postCreatedAt: post.createdAt,
      },
      // Saved progress (an upload session, a publish id) means the connector resumes the same remote
      // work, which cannot create a second copy; without it an interrupted send may have posted.
      progress: { saved: existing && existing.status !== 'sent' ? existing.meta : null },
      finalAttempt,
    });
    switch (sent.kind) {
      case 'held':
        return {
          retry: true,
          leased: true,
          retryAfterMs: sent.retryAfterMs,
          message: `${platform}: segment being sent by another run`,
        };
      case 'taken':
        return { retry: true, retryAfterMs: undefined, message: `${platform}: segment taken by another run` };
      case 'found':
        await record(item.segmentIndex, sent.remote);
        confirmedByReadback = true;
        continue;
      case 'doubt':
        // Not settled yet (asked again on the next attempt before anything is sent), unknown, or expired.
        return settleDoubt(ctx, post.id, platform, item.segmentIndex, sent.decision);
      case 'pending':
        // The network is still processing the media: a wait, which the next call resumes.
        ctx.metrics.publishRetry(platform, 'processing');
        return {
          retry: true,
          processing: true,
          retryAfterMs: sent.checkAfterMs,
          message: `${platform}: processing`,
        };
      case 'sent':
        if (item.segmentIndex === lastIndex && !commentAfter) {
          // Nothing else runs before the result below, so the mark is written as soon as it would be alone.
          lastSent = { index: item.segmentIndex, remote: sent.remote };
          refs.set(item.segmentIndex, sent.remote);
        } else {
          await record(item.segmentIndex, sent.remote);
        }
        if (sent.readBack) confirmedByReadback = true;
        continue;
      default: {
        const sends = (existing?.attempts ?? 0) + 1;
        return handleFailure(ctx, post, platform, item.segmentIndex, sent.failure, finalAttempt, sends);
      }
    }
  }

  if (commentAfter && lastIndex !== undefined) {
    const comment = await sendFirstComment(ctx, loaded, platform, {
      connector: session.connector,
      credentials: session.credentials,
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
