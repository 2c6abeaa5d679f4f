import type { TPlatform } from '@sps/core';
import type { TLoadedPost } from '@sps/db';
import type { TRemoteRef } from '@sps/networks';
import type { TPublisherContext } from './context.js';
import { connectorAccount } from './credentials.js';
import { failTarget, type TNetworkOutcome } from './target-outcomes.js';

// The steps of a network's publish before its first segment and after its last (publish.processor.ts
// sends the segments in between).

type TAccountRow = TLoadedPost['accounts'][number];

/**
 * The account, connector and usable credentials a network is published with, or the outcome when there
 * are none: an account no longer connected, a network this server does not publish to, a token refresh
 * refused (or pending, retried unless this is the last attempt).
 */
export async function readyToSend(
  ctx: TPublisherContext,
  loaded: TLoadedPost,
  platform: TPlatform,
  finalAttempt: boolean,
): Promise<
  | { outcome: TNetworkOutcome }
  | {
      account: TAccountRow;
      connector: NonNullable<TPublisherContext['connectors'][TPlatform]>;
      credentials: ReturnType<typeof connectorAccount>;
    }
> {
  const accountId = loaded.targetAccounts[platform];
  const account = loaded.accounts.find((a) => a.id === accountId);
  if (!account?.isActive) {
    await failTarget(
      ctx,
      loaded.post.id,
      platform,
      `The ${platform} account is no longer connected. Reconnect it, then retry the post.`,
      'auth_expired',
    );
    return { outcome: { retry: false } };
  }
  const connector = ctx.connectors[platform];
  if (!connector) {
    await failTarget(
      ctx,
      loaded.post.id,
      platform,
      `Publishing to ${platform} is not supported by this server.`,
      'rejected',
    );
    return { outcome: { retry: false } };
  }
  let credentials = connectorAccount(account, ctx.options.encryptionKey);
  // A token that expires within a minute is refreshed first (under the account's lock).
  const fresh = await ctx.tokens.forPublish(account.id, account.tokenExpiresAt);
  if (fresh && !fresh.ok) {
    if (fresh.reason === 'transient' && !finalAttempt) {
      ctx.metrics.publishRetry(platform, 'transient');
      return {
        outcome: { retry: true, retryAfterMs: undefined, message: `${platform}: token refresh pending` },
      };
    }
    await failTarget(
      ctx,
      loaded.post.id,
      platform,
      fresh.message,
      fresh.reason === 'refused' ? 'auth_expired' : 'transient',
    );
    return { outcome: { retry: false, expired: fresh.reason === 'refused' } };
  }
  if (fresh?.ok) credentials = { ...credentials, token: fresh.token };
  return { account, connector, credentials };
}

/**
 * A network's success: the last segment's mark, the result and (when this network was the attempt's last
 * pending one) the attempt's end, in one statement; then its metrics.
 */
export async function networkDone(
  ctx: TPublisherContext,
  postId: string,
  platform: TPlatform,
  done: {
    first: (TRemoteRef & { url: string }) | undefined;
    lastSent: { index: number; remote: TRemoteRef & { url: string } } | null;
    confirmedByReadback: boolean;
    finalizeAttempt: number | null;
    dueAt: number;
  },
) {
  const { first, confirmedByReadback, finalizeAttempt, dueAt } = done;
  const sent = done.lastSent;
  const finalized = await ctx.publishing.networkSucceeded(postId, platform, {
    ...(sent
      ? {
          sent: {
            segmentIndex: sent.index,
            remoteId: sent.remote.remoteId,
            remoteUrl: sent.remote.url,
            ...(sent.remote.meta ? { meta: sent.remote.meta } : {}),
          },
        }
      : {}),
    remotePostId: first?.remoteId ?? null,
    remoteUrl: first?.url || null,
    // A success learned by reading the network back is shown as such (README, Decisions).
    errorKind: confirmedByReadback ? 'readback' : null,
    finalizeAttempt,
  });
  ctx.metrics.publishOutcome(platform, 'success', null, confirmedByReadback ? 'readback' : 'none');
  ctx.metrics.publishLatency(platform, (Date.now() - dueAt) / 1000);
  return finalized;
}
