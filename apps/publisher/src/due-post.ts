import {
  findPublishProblems,
  hasPublishProblems,
  problemForPlatform,
  type TAllowancePlan,
  type TPlatform,
  type TPostRecord,
  twitterAllowanceUsedUp,
} from '@sps/core';
import { usageMonth } from '@sps/db';
import { enqueuePublish } from '@sps/queue';
import type { TPublisherContext } from './context.js';

export interface TAllowanceOutcome {
  /** Set when the allowance is used up: twitter fails with this text, the other networks publish. */
  refused?: string;
  /** Gives the unit back when the publish does not start after all. */
  release?: () => Promise<void>;
}

/**
 * A Variant A (or MCP) post that fires takes a unit of the plan's monthly twitter allowance, as a publish
 * request does in the API; a Variant B post does not.
 */
export async function takeTwitterAllowance(
  ctx: TPublisherContext,
  post: TPostRecord,
  /** The owner as read ahead (a prepared post); read now when omitted. */
  known?: { counts: boolean; accountId: string; plan: string },
): Promise<TAllowanceOutcome> {
  if (!post.platforms.includes('twitter')) return {};
  const owner = known ?? (await ctx.publishing.allowanceOf(post.id));
  if (!owner?.counts) return {};
  const plan = owner.plan as TAllowancePlan;
  const limit = ctx.options.twitterAllowance[plan] ?? 0;
  const now = new Date();
  const month = usageMonth(now);
  const outcome = await ctx.usage.reserve(owner.accountId, 'twitter', month, limit);
  if (outcome.reserved) return { release: () => ctx.usage.release(owner.accountId, 'twitter', month) };
  const error = twitterAllowanceUsedUp(plan, limit, outcome.used, now);
  return { refused: `${error.message}. ${error.fix ?? ''}`.trim() };
}

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
  const allowance = await takeTwitterAllowance(ctx, post);
  if (allowance.refused && post.platforms.length === 1) {
    const failed = await ctx.publishing.failBeforeSending(post.id, from, { twitter: allowance.refused });
    return failed ? 'failed' : 'skipped';
  }
  const outcome = await ctx.publishing
    .begin({
      accountId: post.accountId,
      postId: post.id,
      from: [from],
      accounts,
      clearQueue,
      ...(allowance.refused
        ? { preFailed: { twitter: { error: allowance.refused, errorKind: 'quota_exceeded' } } }
        : {}),
    })
    .catch(async (error: unknown) => {
      // The job is retried and takes a unit again: this one goes back.
      await allowance.release?.().catch(() => undefined);
      throw error;
    });
  if (outcome.kind !== 'started') {
    // Another job started (or removed) it first: the unit goes back.
    await allowance.release?.().catch(() => undefined);
    return 'skipped';
  }
  await enqueuePublish(ctx.queues, post.id, outcome.attempt);
  return 'started';
}
