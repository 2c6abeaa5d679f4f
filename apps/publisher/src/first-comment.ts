import { FIRST_COMMENT_SEGMENT, FIRST_COMMENT_STYLE, storablePostUrl, type TPlatform } from '@sps/core';
import type { TLoadedPost } from '@sps/db';
import type { TConnectorAccount, TNetworkFailure, TRemoteRef } from '@sps/networks';
import { heldByAnotherRun, leaseFromNow, whileClaimed } from './claim-lease.js';
import type { TPublisherContext } from './context.js';
import { resolveUnanswered } from './readback.js';
import { failureAfterRenewal } from './renewal-failure.js';
import type { TNetworkOutcome } from './target-outcomes.js';

type TRef = TRemoteRef & { url: string };

/**
 * Sends a post's first comment on one network once every segment is out: a comment under the main post
 * (LinkedIn, Facebook, Instagram, YouTube) or a reply to the thread's last post (X, Threads, Bluesky,
 * Mastodon). It is recorded as a segment (index FIRST_COMMENT_SEGMENT): a write-ahead row before the call,
 * the answer after it, and a read-back of a lost answer where the network allows it, so it is sent at most
 * once. Its failure never fails the post: it is stored on its row (shown as `first_comment`) and the network
 * is done. Returns a retry outcome only for a transient failure before the job's last attempt.
 */
export async function sendFirstComment(
  ctx: TPublisherContext,
  loaded: TLoadedPost,
  platform: TPlatform,
  send: {
    connector: NonNullable<TPublisherContext['connectors'][TPlatform]>;
    credentials: TConnectorAccount;
    refs: Map<number, TRef>;
    lastIndex: number;
    finalAttempt: boolean;
  },
): Promise<{ retry: Extract<TNetworkOutcome, { retry: true }> } | null> {
  const { post } = loaded;
  const text = post.firstComment;
  const style = FIRST_COMMENT_STYLE[platform];
  if (!text || !style) return null;
  const { connector, refs, finalAttempt } = send;
  let credentials = send.credentials;
  const index = FIRST_COMMENT_SEGMENT;
  const existing = loaded.segments.find((s) => s.platform === platform && s.segmentIndex === index);
  if (existing?.status === 'sent') return null;
  const root = refs.get(0) ?? null;
  const parent = (style === 'comment' ? root : refs.get(send.lastIndex)) ?? null;
  if (!parent) return null;
  const idempotencyKey = `${post.id}-${platform}-first-comment`;
  const record = (remote: { remoteId: string; url: string; meta?: Record<string, string> }) =>
    ctx.publishing.markSent(post.id, platform, index, {
      remoteId: remote.remoteId,
      remoteUrl: storablePostUrl(remote.url),
      ...(remote.meta ? { meta: remote.meta } : {}),
    });
  const fail = async (message: string) => {
    await ctx.publishing.markSegment(post.id, platform, index, 'failed', message);
    return null;
  };
  const doubt = async (since: Date, lastSentAt: Date, personAsked: boolean, leaseEnd: Date | null) => {
    const decision = await resolveUnanswered(ctx, {
      postId: post.id,
      platform,
      account: credentials,
      segmentIndex: index,
      text,
      replyTo: parent,
      root,
      mediaCount: 0,
      idempotencyKey,
      postCreatedAt: post.createdAt,
      since,
      lastSentAt,
      leaseEnd,
      personAsked,
      finalAttempt,
    });
    switch (decision.do) {
      case 'record':
        await record(decision.remote);
        return { settled: true as const };
      case 'send':
        return { settled: false as const };
      case 'retry':
        ctx.metrics.publishRetry(platform, 'transient');
        return {
          settled: true as const,
          retry: { retry: true as const, retryAfterMs: decision.retryAfterMs, message: decision.message },
        };
      case 'unknown':
        await ctx.publishing.markSegment(post.id, platform, index, 'unknown', decision.error);
        return { settled: true as const };
      default:
        await fail(`The first comment was not posted: ${decision.error}`);
        return { settled: true as const };
    }
  };

  const held = heldByAnotherRun(existing);
  if (held !== null) {
    // Another run is still sending it (see publish-network.ts): back when its lease lapses.
    const message = `${platform}: first comment being sent by another run`;
    return { retry: { retry: true, leased: true, retryAfterMs: held, message } };
  }
  if (existing && (existing.status === 'sending' || existing.status === 'unknown')) {
    // Sent before and never answered (a crash, a timeout): ask the network before sending again.
    const asked = await doubt(
      existing.createdAt,
      existing.lastSentAt,
      existing.status === 'unknown',
      existing.claimedUntil,
    );
    if (asked.settled) return asked.retry ? { retry: asked.retry } : null;
  }
  const since = existing?.createdAt ?? new Date();
  // Claimed over the row as loaded: another run of this job (a stalled job taken again) sends nothing.
  const claim = { postId: post.id, platform, segmentIndex: index, seenAttempts: existing?.attempts ?? 0 };
  if (
    !(await ctx.publishing.markSending(
      post.id,
      platform,
      index,
      idempotencyKey,
      claim.seenAttempts,
      leaseFromNow(ctx),
    ))
  ) {
    return {
      retry: {
        retry: true,
        retryAfterMs: undefined,
        message: `${platform}: first comment taken by another run`,
      },
    };
  }
  const input = {
    text,
    media: null,
    poll: null,
    replyTo: parent,
    root,
    idempotencyKey,
    sentBefore: existing !== undefined,
    postCreatedAt: post.createdAt,
  };
  // Leased while the calls run, as a segment's (publish-network.ts).
  const outcome = await whileClaimed(
    ctx,
    claim,
    async () => {
      let first = await connector.publish({ ...input, account: credentials });
      if (!first.ok && first.failure.kind === 'auth_expired') {
        const renewed = await ctx.tokens.afterUnauthorized(credentials.id, credentials.token);
        if (renewed?.ok) {
          credentials = { ...credentials, token: renewed.token };
          first = await connector.publish({ ...input, account: credentials });
        } else first = { ok: false, failure: failureAfterRenewal(first.failure, renewed) };
      }
      return first;
    },
    (o) => !o.ok && (o.pending !== undefined || o.failure.outcomeUnknown === true),
  );
  if (outcome.ok) {
    await record(outcome);
    return null;
  }
  const { failure } = outcome;
  if (failure.outcomeUnknown) {
    // From now, when the answer was given up: the request may still land (see publish.processor.ts).
    const lastSent = failure.duplicate && existing ? existing.lastSentAt : new Date();
    const asked = await doubt(since, lastSent, false, null);
    if (asked.settled) return asked.retry ? { retry: asked.retry } : null;
  }
  return failed(ctx, post.id, platform, failure, finalAttempt, fail);
}

async function failed(
  ctx: TPublisherContext,
  postId: string,
  platform: TPlatform,
  failure: TNetworkFailure,
  finalAttempt: boolean,
  fail: (message: string) => Promise<null>,
): Promise<{ retry: Extract<TNetworkOutcome, { retry: true }> } | null> {
  const transient = failure.kind !== 'rejected' && failure.kind !== 'auth_expired';
  if (transient && !finalAttempt) {
    // Nothing went out (or it stays `sending` to be asked about): the job tries again later.
    if (!failure.outcomeUnknown) {
      await ctx.publishing.markSegment(postId, platform, FIRST_COMMENT_SEGMENT, 'failed', failure.message);
    }
    ctx.metrics.publishRetry(platform, failure.kind);
    return {
      retry: {
        retry: true,
        retryAfterMs: failure.retryAfterMs,
        message: `${platform}: first comment ${failure.kind}`,
      },
    };
  }
  return fail(
    transient
      ? `${failure.message} The first comment was given up after several attempts; the post itself is published.`
      : `${failure.message} The post itself is published.`,
  );
}
