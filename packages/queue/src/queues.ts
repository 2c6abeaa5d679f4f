import { Queue } from 'bullmq';
import { bullPrefix, type TRedis } from './connection.js';
import { JOBS, QUEUE_NAMES, type TQueueName } from './job-catalog.js';

export type TQueues = Record<TQueueName, Queue> & { prefix: string; close(): Promise<void> };

export function createQueues(connection: TRedis, queuePrefix: string): TQueues {
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

/** `delayMs`: the reconciler restoring a job whose post waits (media processing, a rate limit) until later. */
export function enqueuePublish(queues: TQueues, postId: string, attempt: number, delayMs = 0) {
  const payload = JOBS.publish.payload.parse({ postId, attempt });
  return queues.publish.add('publish', payload, {
    ...JOBS.publish.options,
    jobId: JOBS.publish.jobId(payload),
    ...(delayMs > 0 ? { delay: delayMs } : {}),
  });
}

export function enqueueDeleteRemote(queues: TQueues, postId: string) {
  const payload = JOBS.deleteRemote.payload.parse({ postId });
  return queues.publish.add('delete-remote', payload, {
    ...JOBS.deleteRemote.options,
    jobId: JOBS.deleteRemote.jobId(payload),
  });
}

/**
 * How a scheduled post is timed. A `prepare` job runs between PREPARE_AHEAD_MS and
 * PREPARE_AHEAD_MS - PREPARE_SPREAD_MS before the due time (spread by post id, so that 10,000 posts due
 * at 9:00 are not all prepared in the same instant); the publisher that prepares a post publishes it at
 * the due second from memory. The `schedule` job is the backstop: it fires SCHEDULE_BACKSTOP_MS after the
 * due time and starts the post the ordinary way if nobody did (the preparing process died, or could not
 * prepare it). A post already due gets the schedule job alone, at once.
 */
export const PREPARE_AHEAD_MS = 60_000;
export const PREPARE_SPREAD_MS = 30_000;
export const SCHEDULE_BACKSTOP_MS = 60_000;

function prepareOffset(postId: string): number {
  return Number.parseInt(postId.replaceAll('-', '').slice(0, 8), 16) % PREPARE_SPREAD_MS;
}

/** The prepare job and the backstop schedule job of a post due at `dueAt` (one round trip). */
export function enqueueSchedule(queues: TQueues, postId: string, dueAt: Date, now = Date.now()) {
  const payload = JOBS.schedule.payload.parse({ postId, dueAt: dueAt.getTime() });
  const schedule = (delay: number) => ({
    name: 'schedule',
    data: payload,
    opts: { ...JOBS.schedule.options, jobId: JOBS.schedule.jobId(payload), delay },
  });
  if (payload.dueAt <= now) return queues.schedule.addBulk([schedule(0)]);
  const prepareAt = payload.dueAt - PREPARE_AHEAD_MS + prepareOffset(payload.postId);
  return queues.schedule.addBulk([
    {
      name: 'prepare',
      data: payload,
      opts: {
        ...JOBS.prepare.options,
        jobId: JOBS.prepare.jobId(payload),
        delay: Math.max(0, prepareAt - now),
      },
    },
    schedule(payload.dueAt + SCHEDULE_BACKSTOP_MS - now),
  ]);
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

/** Drops the prepare and schedule jobs that no longer match the post (moved, unscheduled, deleted). */
export async function removeSchedule(queues: TQueues, postId: string, dueAt: Date): Promise<void> {
  const ids = [
    JOBS.prepare.jobId({ postId, dueAt: dueAt.getTime() }),
    JOBS.schedule.jobId({ postId, dueAt: dueAt.getTime() }),
  ];
  // An active (locked) job cannot be removed; it finds the post changed and does nothing.
  await Promise.all(ids.map((id) => queues.schedule.remove(id).catch(() => undefined)));
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

/** A metrics collection of one connected account whose earliest due post is due at `dueAt` (at once). */
export function enqueueMetricsCollect(queues: TQueues, socialAccountId: string, dueAt: Date) {
  const payload = JOBS.metricsCollect.payload.parse({ socialAccountId, dueAt: dueAt.getTime() });
  return queues.metrics.add('metrics-collect', payload, {
    ...JOBS.metricsCollect.options,
    jobId: JOBS.metricsCollect.jobId(payload),
  });
}

/** Many collections in one Redis round trip (the reconciler); existing ids are ignored. */
export function enqueueMetricsCollects(queues: TQueues, due: { socialAccountId: string; dueAt: Date }[]) {
  return queues.metrics.addBulk(
    due.map((d) => {
      const payload = JOBS.metricsCollect.payload.parse({
        socialAccountId: d.socialAccountId,
        dueAt: d.dueAt.getTime(),
      });
      return {
        name: 'metrics-collect',
        data: payload,
        opts: { ...JOBS.metricsCollect.options, jobId: JOBS.metricsCollect.jobId(payload) },
      };
    }),
  );
}

/** A refresh of one post's figures requested at `at`. */
export function enqueueMetricsRefresh(queues: TQueues, postId: string, at = Date.now()) {
  const payload = JOBS.metricsRefresh.payload.parse({ postId, at });
  return queues.metrics.add('metrics-refresh', payload, {
    ...JOBS.metricsRefresh.options,
    jobId: JOBS.metricsRefresh.jobId(payload),
  });
}
