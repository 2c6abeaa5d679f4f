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
import { heldByAnotherRun, leaseFromNow, whileClaimed } from './claim-lease.js';
import type { TPublisherContext } from './context.js';
import { sendFirstComment } from './first-comment.js';
import { MAX_FREE_RATE_LIMIT_WAITS } from './publish-errors.js';
import { networkDone, readyToSend } from './publish-steps.js';
import { resolveUnanswered, settleDoubt, type TUnanswered } from './readback.js';
import { failureAfterRenewal } from './renewal-failure.js';
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
    const unanswered = (
      since: Date,
      lastSentAt: Date,
      personAsked: boolean,
      leaseEnd: Date | null,
    ): TUnanswered => ({
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
      leaseEnd,
      personAsked,
      finalAttempt,
    });
    const held = heldByAnotherRun(existing);
    if (held !== null) {
      // Another run claimed it and is still sending (its lease is renewed while its call runs): reading the
      // network back now could find nothing yet. Come back when the lease lapses, without spending an attempt.
      return {
        retry: true,
        leased: true,
        retryAfterMs: held,
        message: `${platform}: segment being sent by another run`,
      };
    }
    if (existing && (existing.status === 'sending' || existing.status === 'unknown') && !progress) {
      // Sent before and never answered (a crash, a timeout, or a person's retry): ask the network first.
      const decision = await resolveUnanswered(
        ctx,
        unanswered(
          existing.createdAt,
          existing.lastSentAt,
          existing.status === 'unknown',
          existing.claimedUntil,
        ),
      );
      if (decision.do === 'record') {
        await record(item.segmentIndex, decision.remote);
        confirmedByReadback = true;
        continue;
      }
      if (decision.do !== 'send') return settleDoubt(ctx, post.id, platform, item.segmentIndex, decision);
    }

    const since = existing?.createdAt ?? new Date();
    // Claimed over the row as loaded: another run of this job (a stalled job taken again) sends nothing.
    const claim = {
      postId: post.id,
      platform,
      segmentIndex: item.segmentIndex,
      seenAttempts: existing?.attempts ?? 0,
    };
    if (
      !(await ctx.publishing.markSending(
        post.id,
        platform,
        item.segmentIndex,
        idempotencyKey,
        claim.seenAttempts,
        leaseFromNow(ctx),
      ))
    )
      return { retry: true, retryAfterMs: undefined, message: `${platform}: segment taken by another run` };
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
    // The lease is renewed while the calls run; given back when they leave the row `sending`.
    const outcome = await whileClaimed(
      ctx,
      claim,
      async () => {
        let first = await connector.publish({ ...input, account: credentials });
        if (!first.ok && first.failure.kind === 'auth_expired' && !renewedAfter401) {
          // A 401 gets one refresh and one retry of the same call before it counts as expired.
          renewedAfter401 = true;
          const renewed = await ctx.tokens.afterUnauthorized(account.id, credentials.token);
          if (renewed?.ok) {
            credentials = { ...credentials, token: renewed.token };
            first = await connector.publish({ ...input, account: credentials });
          } else first = { ok: false, failure: failureAfterRenewal(first.failure, renewed) };
        }
        return first;
      },
      (o) => !o.ok && (o.pending !== undefined || o.failure.outcomeUnknown === true),
    );
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
      // The request left and no answer came: the network may hold it already (the timeout case), or store
      // it still (the request given up on may land later), so the settle wait counts from now. A send
      // refused as a duplicate posted nothing: the settle wait counts from the send before it.
      const lastSent = outcome.failure.duplicate && existing ? existing.lastSentAt : new Date();
      const decision = await resolveUnanswered(ctx, unanswered(since, lastSent, false, null));
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
