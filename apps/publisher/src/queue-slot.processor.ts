import { enqueueQueueSlot, parsePayload } from '@sps/queue';
import { type Job, UnrecoverableError } from 'bullmq';
import type { TPublisherContext } from './context.js';
import { startDuePost } from './due-post.js';

/** Plans the account's next slot and makes sure a delayed job waits for it. */
export async function planAccountQueue(ctx: TPublisherContext, accountId: string): Promise<Date | null> {
  const next = await ctx.queue.planNext(accountId, new Date());
  if (next) await enqueueQueueSlot(ctx.queues, accountId, next);
  return next;
}

export async function processQueuePlan(
  ctx: TPublisherContext,
  job: Job,
): Promise<{ nextSlotAt: string | null }> {
  const payload = parsePayload('queuePlan', job.data);
  if (!payload) throw new UnrecoverableError('Malformed queue-plan payload');
  const next = await planAccountQueue(ctx, payload.accountId);
  return { nextSlotAt: next?.toISOString() ?? null };
}

/** A slot came: the oldest queued post publishes in it, then the next slot is planned. */
export async function processQueueSlot(
  ctx: TPublisherContext,
  job: Job,
): Promise<{ status: string; postId?: string }> {
  const payload = parsePayload('queueSlot', job.data);
  if (!payload) throw new UnrecoverableError('Malformed queue-slot payload');
  const post = await ctx.queue.takeSlot(payload.accountId, new Date(payload.slotAt));
  let status = 'stale';
  if (post) status = await startDuePost(ctx, post, 'draft', true);
  await planAccountQueue(ctx, payload.accountId);
  return { status, ...(post ? { postId: post.id } : {}) };
}
