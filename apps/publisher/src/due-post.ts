import {
  findPublishProblems,
  hasPublishProblems,
  problemForPlatform,
  type TPlatform,
  type TPostRecord,
} from '@sps/core';
import { enqueuePublish } from '@sps/queue';
import type { TPublisherContext } from './context.js';

/**
 * A scheduled or queued post came due: the same checks as a publish request, then `publishing` and a
 * publish job. A post that cannot publish fails at once with the reason per network (nobody is waiting
 * for a 422 at this point).
 */
export async function startDuePost(
  ctx: TPublisherContext,
  post: TPostRecord,
  from: 'scheduled' | 'draft',
  clearQueue: boolean,
): Promise<'started' | 'failed' | 'skipped'> {
  const connected = await ctx.socialAccounts.list(post.accountId, { platforms: post.platforms });
  const accounts: Partial<Record<TPlatform, string>> = {};
  for (const account of connected) accounts[account.platform] ??= account.id;
  const problems = findPublishProblems(post, new Set(Object.keys(accounts) as TPlatform[]));
  if (hasPublishProblems(problems)) {
    const errors = Object.fromEntries(
      post.platforms.map((p) => [p, problemForPlatform(problems, p)]).filter(([, e]) => e),
    );
    const failed = await ctx.publishing.failBeforeSending(post.id, from, errors);
    return failed ? 'failed' : 'skipped';
  }
  const outcome = await ctx.publishing.begin({
    accountId: post.accountId,
    postId: post.id,
    from: [from],
    accounts,
    clearQueue,
  });
  if (outcome.kind !== 'started') return 'skipped';
  await enqueuePublish(ctx.queues, post.id, outcome.attempt);
  return 'started';
}
