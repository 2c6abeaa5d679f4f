import { FIRST_COMMENT_SEGMENT, FIRST_COMMENT_STYLE, type TPlatform } from '@sps/core';
import type { TLoadedPost } from '@sps/db';
import type { TConnectorAccount, TNetworkFailure, TRemoteRef } from '@sps/networks';
import type { TPublisherContext } from './context.js';
import { sendClaimedSegment, type TSegmentSent } from './send-segment.js';
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
  const { refs, finalAttempt } = send;
  const index = FIRST_COMMENT_SEGMENT;
  const existing = loaded.segments.find((s) => s.platform === platform && s.segmentIndex === index);
  if (existing?.status === 'sent') return null;
  const root = refs.get(0) ?? null;
  const parent = (style === 'comment' ? root : refs.get(send.lastIndex)) ?? null;
  if (!parent) return null;
  const fail = async (message: string) => {
    await ctx.publishing.markSegment(post.id, platform, index, 'failed', message);
    return null;
  };
  // Its own refresh after a 401, whatever the segments' sends spent.
  const session = { connector: send.connector, credentials: send.credentials, renewedAfter401: false };
  // Leased while the calls run and read back when unanswered, as a segment's (publish-network.ts).
  const sent = await sendClaimedSegment(ctx, session, {
    postId: post.id,
    platform,
    segmentIndex: index,
    existing,
    input: {
      text,
      media: null,
      poll: null,
      replyTo: parent,
      root,
      idempotencyKey: `${post.id}-${platform}-first-comment`,
      sentBefore: existing !== undefined,
      postCreatedAt: post.createdAt,
    },
    finalAttempt,
  });
  switch (sent.kind) {
    case 'held': {
      // Another run is still sending it: back when its lease lapses.
      const message = `${platform}: first comment being sent by another run`;
      return { retry: { retry: true, leased: true, retryAfterMs: sent.retryAfterMs, message } };
    }
    case 'taken': {
      const message = `${platform}: first comment taken by another run`;
      return { retry: { retry: true, retryAfterMs: undefined, message } };
    }
    case 'found':
    case 'sent':
      await ctx.publishing.markSent(post.id, platform, index, {
        remoteId: sent.remote.remoteId,
        remoteUrl: sent.remote.url,
        ...(sent.remote.meta ? { meta: sent.remote.meta } : {}),
      });
      return null;
    case 'doubt':
      return doubted(ctx, post.id, platform, sent.decision, fail);
    case 'pending':
      // Never returned without progress (see send-segment.ts).
      return null;
    default:
      return failed(ctx, post.id, platform, sent.failure, finalAttempt, fail);
  }
}

/** A read-back that could not settle the comment: asked again later, left `unknown`, or given up. */
async function doubted(
  ctx: TPublisherContext,
  postId: string,
  platform: TPlatform,
  decision: Extract<TSegmentSent, { kind: 'doubt' }>['decision'],
  fail: (message: string) => Promise<null>,
): Promise<{ retry: Extract<TNetworkOutcome, { retry: true }> } | null> {
  switch (decision.do) {
    case 'retry':
      ctx.metrics.publishRetry(platform, 'transient');
      return { retry: { retry: true, retryAfterMs: decision.retryAfterMs, message: decision.message } };
    case 'unknown':
      await ctx.publishing.markSegment(postId, platform, FIRST_COMMENT_SEGMENT, 'unknown', decision.error);
      return null;
    default:
      return fail(`The first comment was not posted: ${decision.error}`);
  }
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
