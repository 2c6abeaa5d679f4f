import type { TPlatform, TPostRecord } from '@sps/core';
import type { TPreparedAccount } from '@sps/db';
import type { TPublisherContext } from './context.js';
import { startDuePost, takeTwitterAllowance } from './due-post.js';

/**
 * A scheduled post read and checked ahead of its due time by this process (the prepare job): at the due
 * second it is started from here, so the work left then is one batched version check, one batched start
 * statement and the publish job. What was read ahead is trusted only while it is still true: the start
 * statement requires the post's `updated_at` unchanged (an edit, an unschedule or a delete makes it fall
 * back to the ordinary path), and each account's `is_active` and `credentials_version` are read again
 * first (a disconnect, reconnect or token refresh does the same).
 */
export interface TPreparedPost {
  post: TPostRecord;
  dueAt: number;
  /** The account each network publishes with. */
  accounts: Partial<Record<TPlatform, string>>;
  /** The credentials version of each of those accounts when the post was prepared. */
  versions: Record<string, number>;
  /** Whether its twitter publish takes from the monthly allowance (Variant A), and the owner's plan. */
  owner: { counts: boolean; accountId: string; plan: string };
  /** Those accounts' rows (sealed credentials), used as they are while their versions hold. */
  accountRows: TPreparedAccount[];
  /** Segment rows the post had: with none, the started post is published without being read again. */
  segmentCount: number;
}

/**
 * Starts a prepared post at its due second on what was read ahead, while that is still true: its accounts'
 * versions unchanged, the twitter allowance taken, and the start statement finding the post as prepared.
 * Otherwise the post takes the ordinary path (read again, as the schedule job would), or is left alone.
 */
export async function beginPrepared(
  ctx: TPublisherContext,
  prepared: TPreparedPost,
): Promise<{ kind: 'started'; attempt: number; post: TPostRecord } | { kind: 'done'; result: string }> {
  const { post } = prepared;
  const ids = Object.keys(prepared.versions);
  const current = await Promise.all(ids.map((id) => ctx.publishing.accountVersion(id)));
  const unchanged = current.every(
    (v, i) => v?.isActive === true && v.credentialsVersion === prepared.versions[ids[i] as string],
  );
  if (!unchanged) return { kind: 'done', result: await fallback(ctx, prepared) };
  const allowance = await takeTwitterAllowance(ctx, post, prepared.owner);
  if (allowance.refused && post.platforms.length === 1) {
    await allowance.release?.().catch(() => undefined);
    return { kind: 'done', result: await fallback(ctx, prepared) };
  }
  const outcome = await ctx.publishing
    .begin({
      accountId: post.accountId,
      postId: post.id,
      from: ['scheduled'],
      accounts: prepared.accounts,
      clearQueue: true,
      expectUpdatedAt: post.updatedAt,
      ...(allowance.refused
        ? { preFailed: { twitter: { error: allowance.refused, errorKind: 'quota_exceeded' } } }
        : {}),
    })
    .catch(async (error: unknown) => {
      await allowance.release?.().catch(() => undefined);
      throw error;
    });
  if (outcome.kind !== 'started') {
    await allowance.release?.().catch(() => undefined);
    // Edited since it was prepared: the ordinary path reads it again. Otherwise it was deleted,
    // published early, or started by the backstop: nothing to do.
    return { kind: 'done', result: outcome.kind === 'changed' ? await fallback(ctx, prepared) : 'skipped' };
  }
  return { kind: 'started', attempt: outcome.attempt, post: outcome.post };
}

/** The ordinary path, on what PostgreSQL holds now (as the schedule job would do it). */
async function fallback(ctx: TPublisherContext, prepared: TPreparedPost): Promise<string> {
  const found = await ctx.posts.findForWorker(prepared.post.id);
  if (!found || found.deletedAt) return 'post_gone';
  const { post } = found;
  if (post.status !== 'scheduled' || post.scheduledFor?.getTime() !== prepared.dueAt) return 'stale';
  return startDuePost(ctx, post, 'scheduled', true);
}
