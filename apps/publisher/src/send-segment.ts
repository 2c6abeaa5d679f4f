import { storablePostUrl, type TPlatform } from '@sps/core';
import type { TLoadedPost } from '@sps/db';
import type { TConnectorAccount, TNetworkFailure, TPublishInput, TPublishOutcome } from '@sps/networks';
import { heldByAnotherRun, leaseFromNow, whileClaimed } from './claim-lease.js';
import type { TPublisherContext } from './context.js';
import { resolveUnanswered, type TDoubtDecision } from './readback.js';
import { failureAfterRenewal } from './renewal-failure.js';

// The send of one claimed segment (a post's segment, or its first comment): a claim another run holds is
// waited for, an unanswered earlier send is read back before anything goes out, the write-ahead claim is
// taken, and the connector call runs under the claim's lease with one token refresh after a 401. What the
// answer means for the post is the caller's: a segment's failure fails the network, a comment's does not.

/** The connector and account the sends of one network share: a token renewed for one serves the next. */
export interface TSendSession {
  connector: NonNullable<TPublisherContext['connectors'][TPlatform]>;
  credentials: TConnectorAccount;
  /** A 401 gets one refresh and one retry per session; a second 401 counts as expired. */
  renewedAfter401: boolean;
}

export interface TSegmentSend {
  postId: string;
  platform: TPlatform;
  segmentIndex: number;
  /** The segment's row as loaded with the post (undefined: never sent). */
  existing: TLoadedPost['segments'][number] | undefined;
  /** What is sent (the account is the session's); its creation time also bounds a read-back. */
  input: Omit<TPublishInput, 'account' | 'progress'> & { postCreatedAt: Date };
  /**
   * Set for a segment whose connector keeps resumable progress (its saved state, or null): a send that
   * resumes saved work cannot create a second copy, so it is never read back. Absent for the first comment.
   */
  progress?: { saved: Record<string, string> | null };
  finalAttempt: boolean;
}

type TRemote = { remoteId: string; url: string; meta?: Record<string, string> };

/** How the send ended; every outcome but `sent`/`found` leaves the segment to the caller's rules. */
export type TSegmentSent =
  /** Another run holds the claim: back when its lease lapses, in `retryAfterMs`. */
  | { kind: 'held'; retryAfterMs: number }
  /** The claim over the row as loaded failed: another run of this job took it. */
  | { kind: 'taken' }
  /** A read-back found the unanswered send on the network (the URL is storable). */
  | { kind: 'found'; remote: TRemote }
  /** A read-back could not settle the unanswered send now (nothing was sent after it). */
  | { kind: 'doubt'; decision: Exclude<TDoubtDecision, { do: 'record' } | { do: 'send' }> }
  /** The network answered with the post (the URL is storable). */
  | { kind: 'sent'; remote: TRemote; readBack: boolean }
  /** The network is still processing the media (only for a send with `progress`). */
  | { kind: 'pending'; checkAfterMs: number }
  /** The network answered with an error, or its outcome stays unknown (then the row stays `sending`). */
  | { kind: 'failed'; failure: TNetworkFailure };

/** Sends one segment under its claim; the caller records or settles what comes back. */
export async function sendClaimedSegment(
  ctx: TPublisherContext,
  session: TSendSession,
  seg: TSegmentSend,
): Promise<TSegmentSent> {
  const { postId, platform, segmentIndex, existing, input } = seg;
  let progress = seg.progress?.saved ?? null;
  const ask = async (since: Date, lastSentAt: Date, personAsked: boolean, leaseEnd: Date | null) => {
    const decision = await resolveUnanswered(ctx, {
      postId,
      platform,
      account: session.credentials,
      segmentIndex,
      text: input.text,
      replyTo: input.replyTo,
      root: input.root,
      mediaCount: (input.media?.images.length ?? 0) + (input.media?.video ? 1 : 0),
      idempotencyKey: input.idempotencyKey,
      postCreatedAt: input.postCreatedAt,
      since,
      lastSentAt,
      leaseEnd,
      personAsked,
      finalAttempt: seg.finalAttempt,
    });
    if (decision.do === 'send') return null;
    return decision.do === 'record'
      ? ({ kind: 'found', remote: decision.remote } as const)
      : ({ kind: 'doubt', decision } as const);
  };

  const held = heldByAnotherRun(existing);
  if (held !== null) {
    // Another run claimed it and is still sending (its lease is renewed while its call runs): reading the
    // network back now could find nothing yet. Come back when the lease lapses, without spending an attempt.
    return { kind: 'held', retryAfterMs: held };
  }
  if (existing && (existing.status === 'sending' || existing.status === 'unknown') && !progress) {
    // Sent before and never answered (a crash, a timeout, or a person's retry): ask the network first.
    const settled = await ask(
      existing.createdAt,
      existing.lastSentAt,
      existing.status === 'unknown',
      existing.claimedUntil,
    );
    if (settled) return settled;
  }

  const since = existing?.createdAt ?? new Date();
  // Claimed over the row as loaded: another run of this job (a stalled job taken again) sends nothing.
  const claim = { postId, platform, segmentIndex, seenAttempts: existing?.attempts ?? 0 };
  const claimed = await ctx.publishing.markSending(
    postId,
    platform,
    segmentIndex,
    input.idempotencyKey,
    claim.seenAttempts,
    leaseFromNow(ctx),
  );
  if (!claimed) return { kind: 'taken' };
  const resumable = seg.progress
    ? {
        progress: {
          saved: progress,
          save: async (state: Record<string, string> | null) => {
            await ctx.publishing.saveProgress(postId, platform, segmentIndex, state);
            progress = state;
          },
        },
      }
    : {};
  const full = { ...input, ...resumable };
  // The lease is renewed while the calls run; given back when they leave the row `sending`.
  const outcome = await whileClaimed(
    ctx,
    claim,
    () => publishOnce(ctx, session, full),
    (o) => !o.ok && (o.pending !== undefined || o.failure.outcomeUnknown === true),
  );
  if (!outcome.ok && outcome.pending && seg.progress) {
    // The connector saved where it is and the segment stays `sending` with that progress, which the next
    // call resumes (never a read-back, never a second send).
    return { kind: 'pending', checkAfterMs: outcome.pending.checkAfterMs };
  }
  if (outcome.ok) {
    const { remoteId, url, meta } = outcome;
    // The network's link is input too: only an https URL is kept (a self-hosted instance could answer anything).
    const remote = { remoteId, url: storablePostUrl(url), ...(meta ? { meta } : {}) };
    return { kind: 'sent', remote, readBack: outcome.readBack === true };
  }
  if (outcome.failure.outcomeUnknown && !progress) {
    // The request left and no answer came: the network may hold it already (the timeout case), or store
    // it still (the request given up on may land later), so the settle wait counts from now. A send
    // refused as a duplicate posted nothing: the settle wait counts from the send before it.
    const lastSent = outcome.failure.duplicate && existing ? existing.lastSentAt : new Date();
    // Not there yet (a doubt): the job asks again on its next attempt before anything is sent.
    const settled = await ask(since, lastSent, false, null);
    if (settled) return settled;
  }
  return { kind: 'failed', failure: outcome.failure };
}

/** One publish call; a 401 gets one refresh and one retry of the same call before it counts as expired. */
async function publishOnce(
  ctx: TPublisherContext,
  session: TSendSession,
  input: Omit<TPublishInput, 'account'>,
): Promise<TPublishOutcome> {
  let first = await session.connector.publish({ ...input, account: session.credentials });
  if (!first.ok && first.failure.kind === 'auth_expired' && !session.renewedAfter401) {
    session.renewedAfter401 = true;
    const renewed = await ctx.tokens.afterUnauthorized(session.credentials.id, session.credentials.token);
    if (renewed?.ok) {
      session.credentials = { ...session.credentials, token: renewed.token };
      first = await session.connector.publish({ ...input, account: session.credentials });
    } else first = { ok: false, failure: failureAfterRenewal(first.failure, renewed) };
  }
  return first;
}
