export const POST_STATUSES = ['draft', 'scheduled', 'publishing', 'published', 'failed'] as const;
export type TPostStatus = (typeof POST_STATUSES)[number];

/** Variant A queue dimension, kept beside the status: `queued` waits for a slot, `pending` for approval. */
export const QUEUE_STATES = ['queued', 'pending'] as const;
export type TQueueState = (typeof QUEUE_STATES)[number];

/** Per-network delivery state. `unknown` means the network call ended without a definite answer. */
export const TARGET_STATUSES = ['pending', 'publishing', 'succeeded', 'failed', 'unknown'] as const;
export type TTargetStatus = (typeof TARGET_STATUSES)[number];

export function isPostStatus(value: string): value is TPostStatus {
  return (POST_STATUSES as readonly string[]).includes(value);
}

/**
 * Published and in-flight posts are frozen (409 in Variant B). A failed post reached no network, so
 * it may be edited and becomes a draft again (the spec is silent; see README, Decisions).
 */
export function canUpdate(status: TPostStatus): boolean {
  return status === 'draft' || status === 'scheduled' || status === 'failed';
}

/** A failed post is deliberately not publishable here: retry re-sends only the failed networks. */
export function canPublish(status: TPostStatus): boolean {
  return status === 'draft' || status === 'scheduled';
}

export function canApprove(status: TPostStatus, queueState: TQueueState | null | undefined): boolean {
  return queueState === 'pending' && status === 'draft';
}

/**
 * Post status derived from its per-network targets. `unknown` is treated as finished but not
 * succeeded, so a post whose only outcomes are unknown ends as failed rather than hanging.
 */
export function resolvePostOutcome(targetStatuses: readonly TTargetStatus[]): TPostStatus {
  if (targetStatuses.some((s) => s === 'pending' || s === 'publishing')) return 'publishing';
  if (targetStatuses.includes('succeeded')) return 'published';
  return 'failed';
}

/** Queue membership does not change the status: a queued or pending post stays a draft until published. */
export function statusOnCreate(input: {
  scheduledFor?: Date | string | null;
  queueState?: TQueueState | null;
}): TPostStatus {
  return input.scheduledFor != null ? 'scheduled' : 'draft';
}

/** Clearing scheduled_for on a scheduled post returns it to draft (lead's decision; the spec is silent). */
export function statusAfterUnschedule(): TPostStatus {
  return 'draft';
}
