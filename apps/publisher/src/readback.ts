import { FIRST_COMMENT_SEGMENT, storablePostUrl, type TPlatform } from '@sps/core';
import type {
  TConnectorAccount,
  TFindOutcome,
  TNetworkConnector,
  TPublishedProbe,
  TRemoteRef,
} from '@sps/networks';
import type { TPublisherContext } from './context.js';
import { failureAfterRenewal } from './renewal-failure.js';
import { failTarget, type TNetworkOutcome, unknownTarget } from './target-outcomes.js';

/**
 * Networks whose API deduplicates a resent request, and for how long after the last send a resend with
 * the same key is trusted to be deduplicated: a segment whose outcome is unknown and cannot be read back
 * may be sent again within it. Keys expire, so each is trusted with a margin for the resend's own trip:
 * - Mastodon keeps the `Idempotency-Key` an hour (PostStatusService stores it with `setex(…, 3_600, …)`,
 *   https://github.com/mastodon/mastodon/blob/main/app/services/post_status_service.rb): 50 minutes;
 * - Discord checks `nonce` with `enforce_nonce` "for uniqueness in the past few minutes"
 *   (https://discord.com/developers/docs/resources/message#create-message): one minute;
 * - Bluesky's record key (from the idempotency key and the post's creation time) never expires: a record
 *   at that key exists or not.
 * Past it, the network is read back (Mastodon, Discord) or the segment stays `unknown` for a person.
 */
export const DEFAULT_KEY_TRUST_MS: Readonly<Partial<Record<TPlatform, number>>> = {
  mastodon: 50 * 60_000,
  discord: 60_000,
  bluesky: Number.POSITIVE_INFINITY,
};

/** READBACK_SETTLE's default: a network that has not shown a post a minute after it was sent does not hold it. */
export const DEFAULT_READBACK_SETTLE_MS = 60_000;

const NAMES: Partial<Record<TPlatform, string>> = {
  twitter: 'X',
  linkedin: 'LinkedIn',
  tiktok: 'TikTok',
  youtube: 'YouTube',
};
const networkName = (p: TPlatform) => NAMES[p] ?? p.charAt(0).toUpperCase() + p.slice(1);

/** A segment that was sent and never answered: what was sent, and since when it may have landed. */
export interface TUnanswered {
  postId: string;
  platform: TPlatform;
  account: TConnectorAccount;
  segmentIndex: number;
  text: string;
  replyTo: TRemoteRef | null;
  root: TRemoteRef | null;
  mediaCount: number;
  idempotencyKey: string;
  postCreatedAt: Date;
  /** When the write-ahead row was first recorded: the start of the window searched. */
  since: Date;
  /** When the segment was last sent (the latest write-ahead): "absent" is trusted READBACK_SETTLE after it. */
  lastSentAt: Date;
  /**
   * When the claim's lease of the run that sent it lapsed (or was given back), if later than `lastSentAt`:
   * that run may have been sending until then, so "absent" is trusted READBACK_SETTLE after it instead.
   */
  leaseEnd: Date | null;
  /**
   * A person asked for this resend (retry, or publishing the post again) after an earlier attempt could not
   * tell: what the network cannot be asked about is sent.
   */
  personAsked: boolean;
  finalAttempt: boolean;
}

/** What to do with an unanswered segment. */
export type TDoubtDecision =
  | { do: 'record'; remote: { remoteId: string; url: string; meta?: Record<string, string> } }
  | { do: 'send' }
  /** Leave it `unknown`: `error` tells a person exactly what to check. */
  | { do: 'unknown'; error: string }
  /** Ask again later (a failed read, or a network that may still be storing the post). */
  | { do: 'retry'; retryAfterMs: number | undefined; message: string }
  /** The account's token was refused even after a refresh. */
  | { do: 'expired'; error: string };

function excerpt(text: string): string {
  const chars = Array.from(text.replace(/\s+/g, ' ').trim());
  return chars.length > 80 ? `${chars.slice(0, 80).join('')}…` : chars.join('');
}

const minute = (d: Date) => `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;

/** The text a person reads when the service cannot tell: which account, which text, which time window. */
export function doubtMessage(u: TUnanswered, reason: string, until: Date): string {
  const name = networkName(u.platform);
  const part =
    u.segmentIndex === 0
      ? 'this post'
      : u.segmentIndex === FIRST_COMMENT_SEGMENT
        ? 'the first comment of this post'
        : `part ${u.segmentIndex + 1} of this post`;
  return (
    `${name} may or may not have received ${part}: ${reason} ` +
    `Check the ${name} account ${u.account.accountName} for a post with the text "${excerpt(u.text)}" ` +
    `made between ${minute(new Date(u.since.getTime() - 60_000))} and ${minute(new Date(until.getTime() + 60_000))}. ` +
    'If it is there, leave this post as it is (a retry would send it again); if it is not, use retry to send it.'
  );
}

function probeOf(
  ctx: TPublisherContext,
  u: TUnanswered,
  account: TConnectorAccount,
  until: Date,
): TPublishedProbe {
  return {
    account,
    text: u.text,
    replyTo: u.replyTo,
    root: u.root,
    mediaCount: u.mediaCount,
    idempotencyKey: u.idempotencyKey,
    postCreatedAt: u.postCreatedAt,
    since: u.since,
    until,
    // Another segment's post (same text, an earlier post) is never taken for this one.
    claimed: (remoteIds) => claimedIds(ctx, u, account, remoteIds),
  };
}

function claimedIds(ctx: TPublisherContext, u: TUnanswered, account: TConnectorAccount, remoteIds: string[]) {
  return ctx.publishing.claimedRemoteIds({
    platform: u.platform,
    externalId: account.externalId,
    remoteIds,
    postId: u.postId,
    segmentIndex: u.segmentIndex,
  });
}

/** Asks the network once; a refused token gets one refresh and one more question. */
async function ask(
  ctx: TPublisherContext,
  connector: TNetworkConnector & Required<Pick<TNetworkConnector, 'findPublished'>>,
  u: TUnanswered,
  until: Date,
): Promise<{ outcome: TFindOutcome; account: TConnectorAccount }> {
  let account = u.account;
  let outcome = await connector.findPublished(probeOf(ctx, u, account, until));
  if (outcome.kind === 'failed' && outcome.failure.kind === 'auth_expired') {
    const renewed = await ctx.tokens.afterUnauthorized(account.id, account.token);
    if (renewed?.ok) {
      account = { ...account, token: renewed.token };
      outcome = await connector.findPublished(probeOf(ctx, u, account, until));
    } else outcome = { kind: 'failed', failure: failureAfterRenewal(outcome.failure, renewed) };
  }
  return { outcome, account };
}

/**
 * Before an unanswered segment is sent again (after a crash, a timeout, or a person's retry), the network
 * is asked whether it holds it: found is recorded as if the answer had arrived, absent is sent, and only
 * what cannot be asked stays `unknown` with the exact check a person should make. "Absent" is trusted
 * once the network has had `readbackSettleMs` since the latest send to store and show the post.
 */
export async function resolveUnanswered(ctx: TPublisherContext, u: TUnanswered): Promise<TDoubtDecision> {
  const connector = ctx.connectors[u.platform];
  const until = new Date();
  // The key still dedupes a resend only while the network remembers it (from the latest send).
  const trust = ctx.options.keyTrustMs?.[u.platform] ?? DEFAULT_KEY_TRUST_MS[u.platform];
  const idempotent = trust !== undefined && until.getTime() - u.lastSentAt.getTime() < trust;
  const expired =
    trust === undefined || idempotent
      ? ''
      : ` A resend would not be deduplicated any more: ${networkName(u.platform)} remembers its idempotency key only a while.`;
  const cannotTell = (reason: string): TDoubtDecision =>
    idempotent || u.personAsked
      ? { do: 'send' }
      : { do: 'unknown', error: doubtMessage(u, `${reason}${expired}`, until) };
  if (!connector?.findPublished) {
    return cannotTell(
      `the previous attempt was interrupted and ${networkName(u.platform)}'s API cannot be asked.`,
    );
  }
  const { outcome } = await ask(ctx, connector as Parameters<typeof ask>[1], u, until);
  switch (outcome.kind) {
    case 'found': {
      // Checked again just before it is recorded: a connector that does not filter, or a race with
      // another segment recording the same id, never gives this segment another one's post.
      if ((await claimedIds(ctx, u, u.account, [outcome.remoteId])).has(outcome.remoteId)) {
        ctx.metrics.readback(u.platform, 'retry_later');
        const reason = `${networkName(u.platform)} showed a matching post that is recorded for another post of this service.`;
        if (u.finalAttempt) return cannotTell(reason);
        return {
          do: 'retry',
          retryAfterMs: undefined,
          message: `${u.platform}: read-back found a claimed post`,
        };
      }
      ctx.metrics.readback(u.platform, 'found');
      return {
        do: 'record',
        remote: {
          remoteId: outcome.remoteId,
          url: storablePostUrl(outcome.url),
          ...(outcome.meta ? { meta: outcome.meta } : {}),
        },
      };
    }
    case 'absent': {
      // From the latest send, not the first: a resend the network is still storing is not absent. A lease
      // that lapsed later (a killed run's) moves it there: the run may have sent until then.
      const from = Math.max(u.lastSentAt.getTime(), u.leaseEnd?.getTime() ?? 0);
      const waited = until.getTime() - from;
      if (idempotent || waited >= ctx.options.readbackSettleMs) {
        ctx.metrics.readback(u.platform, 'absent');
        return { do: 'send' };
      }
      ctx.metrics.readback(u.platform, 'retry_later');
      if (u.finalAttempt) {
        return cannotTell(`${networkName(u.platform)} did not show it yet when this attempt gave up.`);
      }
      return {
        do: 'retry',
        retryAfterMs: ctx.options.readbackSettleMs - waited,
        message: `${u.platform}: waiting before trusting a read-back that found nothing`,
      };
    }
    case 'cannot_tell':
      ctx.metrics.readback(u.platform, 'cannot_tell');
      return cannotTell(outcome.reason);
    default: {
      ctx.metrics.readback(u.platform, 'retry_later');
      const { failure } = outcome;
      if (failure.kind === 'auth_expired') return { do: 'expired', error: failure.message };
      if (u.finalAttempt || failure.kind === 'rejected') {
        return cannotTell(`reading the account back failed (${failure.message})`);
      }
      return {
        do: 'retry',
        retryAfterMs: failure.retryAfterMs,
        message: `${u.platform}: read-back ${failure.kind}`,
      };
    }
  }
}

/**
 * Carries out a decision that does not send: the segment stays `unknown` for a person (with what to
 * check), the job asks again later (the segment stays `sending`), or the account's token is expired.
 */
export async function settleDoubt(
  ctx: TPublisherContext,
  postId: string,
  platform: TPlatform,
  segmentIndex: number,
  decision: Exclude<TDoubtDecision, { do: 'record' } | { do: 'send' }>,
): Promise<TNetworkOutcome> {
  if (decision.do === 'retry') {
    ctx.metrics.publishRetry(platform, 'transient');
    return { retry: true, retryAfterMs: decision.retryAfterMs, message: decision.message };
  }
  if (decision.do === 'expired') {
    await failTarget(ctx, postId, platform, decision.error, 'auth_expired');
    return { retry: false, expired: true };
  }
  await ctx.publishing.markSegment(postId, platform, segmentIndex, 'unknown', decision.error);
  await unknownTarget(ctx, postId, platform, decision.error, null);
  return { retry: false };
}
