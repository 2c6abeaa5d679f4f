import { enqueuePublish, enqueueQueueSlot, enqueueSchedule, JOBS } from '@sps/queue';
import type { TPublisherContext } from './context.js';
import { planMetricCollections } from './engagement.processor.js';
import { planAccountQueue } from './queue-slot.processor.js';

const HORIZON_MS = 10 * 60_000;
/** Default of `stuckAfterMs`: well above the longest network call, so a live attempt is not taken for a lost one. */
export const DEFAULT_STUCK_AFTER_MS = 2 * 60_000;

async function readd(
  ctx: TPublisherContext,
  queue: 'publish' | 'schedule',
  jobId: string,
  add: () => Promise<unknown>,
) {
  const job = await ctx.queues[queue].getJob(jobId);
  if (job) {
    const state = await job.getState();
    // A finished job with this id blocks a new one; the database says the work is not done, so redo it.
    if (state !== 'completed' && state !== 'failed') return false;
    await job.remove().catch(() => undefined);
  }
  await add();
  return true;
}

/**
 * Rebuilds from PostgreSQL what Redis should hold (DESIGN invariant 1): schedule jobs of posts due
 * soon, publish jobs of posts stuck in `publishing`, and each account's next queue slot. Flushing
 * Redis loses nothing: the next run puts every job back.
 */
export async function reconcile(ctx: TPublisherContext): Promise<Record<string, number>> {
  const now = new Date();
  let scheduled = 0;
  for (const post of await ctx.publishing.scheduledBefore(new Date(now.getTime() + HORIZON_MS))) {
    if (!post.scheduledFor) continue;
    const due = post.scheduledFor;
    const overdue = now.getTime() - due.getTime() > 60_000;
    const jobId = JOBS.schedule.jobId({ postId: post.id, dueAt: due.getTime() });
    const existing = await ctx.queues.schedule.getJob(jobId);
    if (!existing) {
      await enqueueSchedule(ctx.queues, post.id, due);
      scheduled += 1;
    } else if (
      overdue &&
      (await readd(ctx, 'schedule', jobId, () => enqueueSchedule(ctx.queues, post.id, due)))
    ) {
      scheduled += 1;
    }
  }
  let publishing = 0;
  for (const post of await ctx.publishing.stuckPublishing(
    new Date(now.getTime() - ctx.options.stuckAfterMs),
  )) {
    const jobId = JOBS.publish.jobId({ postId: post.id, attempt: post.publishAttempt });
    // A post waiting on a network (media processing, a rate limit) gets its job back delayed to that time.
    const delay = post.waitUntil ? post.waitUntil.getTime() - now.getTime() : 0;
    const add = () => enqueuePublish(ctx.queues, post.id, post.publishAttempt, delay);
    if (await readd(ctx, 'publish', jobId, add)) {
      publishing += 1;
      await ctx.publishing.touch(post.id);
    }
  }
  let planned = 0;
  for (const accountId of await ctx.queue.accountsNeedingPlan(now, 60_000)) {
    if (await planAccountQueue(ctx, accountId)) planned += 1;
  }
  for (const slot of await ctx.queue.plannedSlots()) {
    // Harmless when the delayed job exists (same id); restores it after Redis loss.
    await enqueueQueueSlot(ctx.queues, slot.accountId, slot.nextSlotAt);
  }
  // Token refreshes due soon get their job back (harmless when it exists: the id holds the due time).
  const refreshes = await ctx.tokens.reconcile(HORIZON_MS).catch(() => 0);
  // Metrics collections due (posts published METRICS_COLLECT_AFTER ago with no snapshot since).
  const metrics = ctx.engagement
    ? await planMetricCollections(ctx, ctx.engagement).catch((err: Error) => {
        ctx.logger.warn({ err: err.message }, 'could not plan metrics collections');
        return 0;
      })
    : 0;
  return { scheduled, publishing, planned, refreshes, metrics };
}
