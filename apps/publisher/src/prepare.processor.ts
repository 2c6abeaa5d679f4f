import { findPublishProblems, hasPublishProblems, type TPlatform } from '@sps/core';
import { parsePayload } from '@sps/queue';
import { type Job, UnrecoverableError } from 'bullmq';
import type { TPublisherContext } from './context.js';
import { restoreBackstop } from './prepared-posts.js';

/**
 * A scheduled post comes due within the minute: read it, its owner's plan and its accounts, and run the
 * publish checks now, so that at the due second this process only starts it (see prepared-posts.ts). A
 * post that would fail its checks is not prepared: its schedule job is brought forward to the due time
 * and fails it then, with what PostgreSQL holds at that moment (an account may still be connected).
 */
export async function processPrepare(ctx: TPublisherContext, job: Job): Promise<{ status: string }> {
  const payload = parsePayload('prepare', job.data);
  if (!payload) throw new UnrecoverableError('Malformed prepare payload');
  const loaded = await ctx.publishing.loadForPrepare(payload.postId);
  if (!loaded || loaded.deletedAt) return { status: 'post_gone' };
  const { post } = loaded;
  if (post.status !== 'scheduled' || post.scheduledFor?.getTime() !== payload.dueAt)
    return { status: 'stale' };
  const accounts: Partial<Record<TPlatform, string>> = {};
  const versions: Record<string, number> = {};
  for (const account of loaded.accounts) {
    const platform = account.platform as TPlatform;
    if (accounts[platform]) continue;
    accounts[platform] = account.id;
    versions[account.id] = account.credentialsVersion;
  }
  if (hasPublishProblems(findPublishProblems(post, new Set(Object.keys(accounts) as TPlatform[])))) {
    await restoreBackstop(ctx.queues, post.id, payload.dueAt);
    return { status: 'not_ready' };
  }
  const added = ctx.prepared.add({
    post,
    dueAt: payload.dueAt,
    accounts,
    versions,
    owner: { counts: loaded.countsTwitterAllowance, accountId: post.accountId, plan: loaded.plan },
    accountRows: loaded.accounts,
    segmentCount: loaded.segmentCount,
  });
  if (!added) {
    await restoreBackstop(ctx.queues, post.id, payload.dueAt);
    return { status: 'stopping' };
  }
  return { status: 'prepared' };
}
