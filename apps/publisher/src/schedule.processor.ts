import { parsePayload } from '@sps/queue';
import { type Job, UnrecoverableError } from 'bullmq';
import type { TPublisherContext } from './context.js';
import { startDuePost } from './due-post.js';

/** A post's scheduled time came. A moved, unscheduled or deleted post makes this job a no-op. */
export async function processSchedule(
  ctx: TPublisherContext,
  job: Job,
): Promise<{ status: string; lateMs?: number }> {
  const payload = parsePayload('schedule', job.data);
  if (!payload) throw new UnrecoverableError('Malformed schedule payload');
  const found = await ctx.posts.findForWorker(payload.postId);
  if (!found || found.deletedAt) return { status: 'post_gone' };
  const { post } = found;
  if (post.status !== 'scheduled' || post.scheduledFor?.getTime() !== payload.dueAt)
    return { status: 'stale' };
  const status = await startDuePost(ctx, post, 'scheduled', true);
  return { status, lateMs: Date.now() - payload.dueAt };
}
