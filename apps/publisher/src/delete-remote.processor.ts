import type { TPlatform } from '@sps/core';
import { parsePayload } from '@sps/queue';
import { type Job, UnrecoverableError } from 'bullmq';
import type { TPublisherContext } from './context.js';
import { connectorAccount } from './credentials.js';
import { failureAfterRenewal } from './renewal-failure.js';

/**
 * Variant A delete with `deleteFromPlatforms`: removes every sent segment where the network's API
 * allows it (replies first), then the post. Transient failures retry the job; networks without a
 * delete API, and permanent refusals, are logged and skipped.
 */
export async function processDeleteRemote(
  ctx: TPublisherContext,
  job: Job,
): Promise<{ deleted: number; skipped: number }> {
  const payload = parsePayload('deleteRemote', job.data);
  if (!payload) throw new UnrecoverableError('Malformed delete payload');
  const found = await ctx.posts.findForWorker(payload.postId);
  if (!found) return { deleted: 0, skipped: 0 };
  const segments = await ctx.posts.sentSegments(payload.postId);
  const accounts = await ctx.socialAccounts.activeWithCredentials(found.post.accountId, found.post.platforms);
  let deleted = 0;
  let skipped = 0;
  let retry: string | null = null;
  for (const segment of segments) {
    const platform = segment.platform as TPlatform;
    const connector = ctx.connectors[platform];
    const account = accounts.find((a) => a.platform === platform);
    if (!connector?.delete || !account || !segment.remoteId) {
      skipped += 1;
      continue;
    }
    const remote = {
      remoteId: segment.remoteId,
      ...(segment.remoteMeta ? { meta: segment.remoteMeta as Record<string, string> } : {}),
    };
    const loaded = connectorAccount(account, ctx.options.encryptionKey);
    let outcome = await connector.delete(loaded, remote);
    if (!outcome.ok && outcome.failure.kind === 'auth_expired') {
      // An expired token (a Bluesky session, an X token) gets one refresh and one more try, as a publish does.
      const renewed = await ctx.tokens.afterUnauthorized(account.id, loaded.token);
      if (renewed?.ok) outcome = await connector.delete({ ...loaded, token: renewed.token }, remote);
      else outcome = { ok: false, failure: failureAfterRenewal(outcome.failure, renewed) };
    }
    if (outcome.ok) {
      deleted += 1;
      await ctx.posts.forgetSegment(segment.id);
    } else if (outcome.failure.kind === 'transient' || outcome.failure.kind === 'rate_limited') {
      retry = outcome.failure.message;
    } else {
      skipped += 1;
      ctx.logger.warn(
        { jobId: job.id, postId: payload.postId, platform, kind: outcome.failure.kind },
        'could not delete a published copy',
      );
    }
  }
  if (retry && job.attemptsMade + 1 < (job.opts.attempts ?? 1)) throw new Error(retry);
  await ctx.posts.hardDelete(payload.postId);
  return { deleted, skipped };
}
