import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { bullPrefix } from './connection.js';
import { JOBS, QUEUE_NAMES, type TQueueName } from './job-catalog.js';

export type TQueues = Record<TQueueName, Queue> & { prefix: string; close(): Promise<void> };

export function createQueues(connection: Redis, queuePrefix: string): TQueues {
  const prefix = bullPrefix(queuePrefix);
  const queues = Object.fromEntries(
    QUEUE_NAMES.map((name) => [name, new Queue(name, { connection, prefix })]),
  ) as Record<TQueueName, Queue>;
  return {
    ...queues,
    prefix,
    async close() {
      await Promise.all(QUEUE_NAMES.map((n) => queues[n].close()));
    },
  };
}

// Producers: one function per job, so ids, queues and options come from the catalog only.

export function enqueuePublish(queues: TQueues, postId: string, attempt: number) {
  const payload = JOBS.publish.payload.parse({ postId, attempt });
  return queues.publish.add('publish', payload, {
    ...JOBS.publish.options,
    jobId: JOBS.publish.jobId(payload),
  });
}

export function enqueueDeleteRemote(queues: TQueues, postId: string) {
  const payload = JOBS.deleteRemote.payload.parse({ postId });
  return queues.publish.add('delete-remote', payload, {
    ...JOBS.deleteRemote.options,
    jobId: JOBS.deleteRemote.jobId(payload),
  });
}

export function enqueueSchedule(queues: TQueues, postId: string, dueAt: Date, now = Date.now()) {
  const payload = JOBS.schedule.payload.parse({ postId, dueAt: dueAt.getTime() });
  return queues.schedule.add('schedule', payload, {
    ...JOBS.schedule.options,
    jobId: JOBS.schedule.jobId(payload),
    delay: Math.max(0, payload.dueAt - now),
  });
}

/** A token refresh at `dueAt` (at once when that is past). */
export function enqueueTokenRefresh(queues: TQueues, socialAccountId: string, dueAt: Date, now = Date.now()) {
  const payload = JOBS.tokenRefresh.payload.parse({ socialAccountId, dueAt: dueAt.getTime() });
  return queues.schedule.add('token-refresh', payload, {
    ...JOBS.tokenRefresh.options,
    jobId: JOBS.tokenRefresh.jobId(payload),
    delay: Math.max(0, payload.dueAt - now),
  });
}

/** Drops a schedule job that no longer matches the post (moved, unscheduled, deleted). */
export async function removeSchedule(queues: TQueues, postId: string, dueAt: Date): Promise<void> {
  const job = await queues.schedule.getJob(JOBS.schedule.jobId({ postId, dueAt: dueAt.getTime() }));
  await job?.remove().catch(() => undefined);
}

export function enqueueQueueSlot(queues: TQueues, accountId: string, slotAt: Date, now = Date.now()) {
  const payload = JOBS.queueSlot.payload.parse({ accountId, slotAt: slotAt.getTime() });
  return queues['queue-slot'].add('queue-slot', payload, {
    ...JOBS.queueSlot.options,
    jobId: JOBS.queueSlot.jobId(payload),
    delay: Math.max(0, payload.slotAt - now),
  });
}

export function enqueueQueuePlan(queues: TQueues, accountId: string) {
  const payload = JOBS.queuePlan.payload.parse({ accountId });
  return queues['queue-slot'].add('queue-plan', payload, {
    ...JOBS.queuePlan.options,
    jobId: JOBS.queuePlan.jobId({ accountId, at: Date.now() }),
  });
}

export interface TDeliveryRef {
  deliveryId: string;
  eventId: string;
  webhookId: string;
}

/**
 * Enqueues one webhook delivery (id `delivery-<eventId>-<webhookId>`). With `replaceFinished`, a
 * completed or failed job of the same id is removed first (a manual retry, or the reconciler finding the
 * database still open), since BullMQ ignores an add whose id exists; `added` is then exact.
 */
export async function enqueueWebhookDelivery(
  queues: TQueues,
  ref: TDeliveryRef,
  options: { delayMs?: number; replaceFinished?: boolean; attempts?: number } = {},
) {
  const payload = JOBS.webhookDelivery.payload.parse({ deliveryId: ref.deliveryId });
  const jobId = JOBS.webhookDelivery.jobId(ref);
  const queue = queues['webhook-delivery'];
  if (options.replaceFinished) {
    const existing = await queue.getJob(jobId);
    if (existing) {
      const state = await existing.getState();
      if (state !== 'completed' && state !== 'failed') return { jobId, added: false };
      await existing.remove();
    }
  }
  await queue.add('deliver', payload, {
    ...JOBS.webhookDelivery.options,
    jobId,
    ...(options.attempts ? { attempts: options.attempts } : {}),
    ...(options.delayMs && options.delayMs > 0 ? { delay: options.delayMs } : {}),
  });
  return { jobId, added: true };
}

/** Many new deliveries in one Redis round trip (the dispatcher); duplicates of existing ids are ignored. */
export function enqueueWebhookDeliveries(
  queues: TQueues,
  refs: TDeliveryRef[],
  options: { attempts?: number } = {},
) {
  return queues['webhook-delivery'].addBulk(
    refs.map((ref) => ({
      name: 'deliver',
      data: JOBS.webhookDelivery.payload.parse({ deliveryId: ref.deliveryId }),
      opts: {
        ...JOBS.webhookDelivery.options,
        jobId: JOBS.webhookDelivery.jobId(ref),
        ...(options.attempts ? { attempts: options.attempts } : {}),
      },
    })),
  );
}
