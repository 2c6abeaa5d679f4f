import { z } from 'zod';

// Job name → queue, payload schema, job id and default options. Payloads carry ids only (never tokens
// or post content) and ids are deterministic, so enqueueing twice is harmless.

const ZUuid = z.uuid();
const keepCompleted = { age: 3600, count: 10_000 };
const keepFailed = { age: 7 * 86400 };

export const JOBS = {
  /** Publishes one attempt of a post to its networks. */
  publish: {
    queue: 'publish',
    payload: z.object({ postId: ZUuid, attempt: z.int().min(1) }).strict(),
    jobId: (p: { postId: string; attempt: number }) => `publish-${p.postId}-${p.attempt}`,
    options: {
      attempts: 8,
      backoff: { type: 'custom' },
      removeOnComplete: keepCompleted,
      removeOnFail: keepFailed,
    },
  },
  /** Removes a post's published copies from the networks, then the post (Variant A delete). */
  deleteRemote: {
    queue: 'publish',
    payload: z.object({ postId: ZUuid }).strict(),
    jobId: (p: { postId: string }) => `delete-${p.postId}`,
    options: {
      attempts: 6,
      backoff: { type: 'exponential', delay: 2000 },
      removeOnComplete: keepCompleted,
      removeOnFail: keepFailed,
    },
  },
  /** Fires at a post's scheduled time; the due time is part of the id, so a moved schedule is a new job. */
  schedule: {
    queue: 'schedule',
    payload: z.object({ postId: ZUuid, dueAt: z.int() }).strict(),
    jobId: (p: { postId: string; dueAt: number }) => `schedule-${p.postId}-${p.dueAt}`,
    options: {
      attempts: 5,
      backoff: { type: 'exponential', delay: 1000 },
      removeOnComplete: keepCompleted,
      removeOnFail: keepFailed,
    },
  },
  /**
   * Prepares a scheduled post ahead of its due time (loads it and its accounts, checks it, plans it) so that
   * at the due second only the network calls and the result writes remain; the same id rules as `schedule`.
   */
  prepare: {
    queue: 'schedule',
    payload: z.object({ postId: ZUuid, dueAt: z.int() }).strict(),
    jobId: (p: { postId: string; dueAt: number }) => `prepare-${p.postId}-${p.dueAt}`,
    options: {
      attempts: 3,
      backoff: { type: 'exponential', delay: 1000 },
      removeOnComplete: keepCompleted,
      removeOnFail: keepFailed,
    },
  },
  /**
   * Refreshes a connected account's token ahead of its expiry; the due time is part of the id, so each
   * new token gets its own job and enqueueing the same one again (reconciler) is harmless.
   */
  tokenRefresh: {
    queue: 'schedule',
    payload: z.object({ socialAccountId: ZUuid, dueAt: z.int() }).strict(),
    jobId: (p: { socialAccountId: string; dueAt: number }) => `token-refresh-${p.socialAccountId}-${p.dueAt}`,
    options: {
      attempts: 6,
      backoff: { type: 'exponential', delay: 5000 },
      removeOnComplete: keepCompleted,
      removeOnFail: keepFailed,
    },
  },
  /** Rebuilds from PostgreSQL whatever Redis should hold (job scheduler). */
  reconcile: {
    queue: 'schedule',
    payload: z.object({}).strict(),
    jobId: () => 'reconcile',
    options: { attempts: 1, removeOnComplete: true, removeOnFail: { count: 100 } },
  },
  /** Removes media items no post uses after MEDIA_RETENTION, and those of deleted accounts (job scheduler). */
  mediaSweep: {
    queue: 'schedule',
    payload: z.object({}).strict(),
    jobId: () => 'media-sweep',
    options: { attempts: 1, removeOnComplete: true, removeOnFail: { count: 100 } },
  },
  /** Variant A interval queue: publishes the account's oldest queued post in the slot at `slotAt`. */
  queueSlot: {
    queue: 'queue-slot',
    payload: z.object({ accountId: ZUuid, slotAt: z.int() }).strict(),
    jobId: (p: { accountId: string; slotAt: number }) => `queue-slot-${p.accountId}-${p.slotAt}`,
    options: {
      attempts: 5,
      backoff: { type: 'exponential', delay: 1000 },
      removeOnComplete: keepCompleted,
      removeOnFail: keepFailed,
    },
  },
  /** Re-plans an account's next queue slot after queue or settings changes. */
  queuePlan: {
    queue: 'queue-slot',
    payload: z.object({ accountId: ZUuid }).strict(),
    // Planning is idempotent; a fresh id per request so a change during a running plan is not lost.
    jobId: (p: { accountId: string; at: number }) => `queue-plan-${p.accountId}-${p.at}`,
    options: {
      attempts: 5,
      backoff: { type: 'exponential', delay: 1000 },
      removeOnComplete: true,
      removeOnFail: keepFailed,
    },
  },
  /** Moves undispatched outbox events to deliveries and re-enqueues open deliveries (job scheduler). */
  webhookDispatch: {
    queue: 'webhook-delivery',
    payload: z.object({}).strict(),
    jobId: () => 'webhook-dispatch',
    options: { attempts: 1, removeOnComplete: true, removeOnFail: { count: 100 } },
  },
  /** One delivery of one event to one webhook; retried on WEBHOOK_RETRY_DELAYS by the worker's backoff. */
  webhookDelivery: {
    queue: 'webhook-delivery',
    payload: z.object({ deliveryId: ZUuid }).strict(),
    jobId: (p: { eventId: string; webhookId: string }) => `delivery-${p.eventId}-${p.webhookId}`,
    options: {
      attempts: 6,
      backoff: { type: 'custom' },
      removeOnComplete: keepCompleted,
      removeOnFail: keepFailed,
    },
  },
  /**
   * Reads the figures of one connected account's published posts whose collection is due (reconciler, from
   * PostgreSQL), batched as the network allows. The earliest due time is part of the id: once collected,
   * the next due time makes a new job, and re-enqueueing the same one is harmless.
   */
  metricsCollect: {
    queue: 'metrics',
    payload: z.object({ socialAccountId: ZUuid, dueAt: z.int() }).strict(),
    jobId: (p: { socialAccountId: string; dueAt: number }) => `metrics-${p.socialAccountId}-${p.dueAt}`,
    options: {
      attempts: 4,
      // The worker's strategy: the network's retry-after on a rate limit, else 30 s doubling.
      backoff: { type: 'custom' },
      removeOnComplete: keepCompleted,
      removeOnFail: keepFailed,
    },
  },
  /** `POST /v1/posts/{id}/metrics/refresh`: reads one post's figures now (the request time is in the id). */
  metricsRefresh: {
    queue: 'metrics',
    payload: z.object({ postId: ZUuid, at: z.int() }).strict(),
    jobId: (p: { postId: string; at: number }) => `metrics-refresh-${p.postId}-${p.at}`,
    options: {
      attempts: 3,
      backoff: { type: 'custom' },
      removeOnComplete: keepCompleted,
      removeOnFail: keepFailed,
    },
  },
} as const;

const DELIVERY_JOB_ID = /^delivery-[0-9a-f-]{36}-([0-9a-f-]{36})$/i;

/** The webhook a delivery job is for, read from its deterministic id (`delivery-<eventId>-<webhookId>`). */
export function webhookOfDeliveryJob(jobId: string | undefined): string | undefined {
  return jobId ? DELIVERY_JOB_ID.exec(jobId)?.[1] : undefined;
}

export type TJobName = keyof typeof JOBS;
export type TPayload<N extends TJobName> = z.output<(typeof JOBS)[N]['payload']>;

/** `metrics` is its own queue with its own workers, so reading figures never takes a publishing slot. */
export const QUEUE_NAMES = ['publish', 'schedule', 'queue-slot', 'webhook-delivery', 'metrics'] as const;
export type TQueueName = (typeof QUEUE_NAMES)[number];

/** Checks a payload at dequeue; a malformed one is a permanent failure, never retried. */
export function parsePayload<N extends TJobName>(name: N, data: unknown): TPayload<N> | null {
  const result = JOBS[name].payload.safeParse(data);
  return result.success ? (result.data as TPayload<N>) : null;
}
