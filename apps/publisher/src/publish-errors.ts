// The publish job's outcomes that are not a result: a retry later, or a wait that spends no attempt;
// and the retry delays BullMQ applies to them.

/** Thrown to make BullMQ retry the job later; carries the longest wait a network asked for. */
export class RetryLaterError extends Error {
  constructor(
    message: string,
    readonly retryAfterMs: number | undefined,
  ) {
    super(message);
    this.name = 'RetryLaterError';
  }
}

/**
 * Thrown when every network left in the attempt waits (for its media to be processed, or for a rate
 * limit's retry-after): the job is delayed (not retried: no attempt is spent) for `waitMs`, written to
 * `posts.wait_until` first so the reconciler rebuilds the wait after a Redis loss; the slot is free meanwhile.
 */
export class NetworkWaitError extends RetryLaterError {
  constructor(
    message: string,
    readonly waitMs: number,
  ) {
    super(message, waitMs);
    this.name = 'NetworkWaitError';
  }
}

/** A {@link NetworkWaitError} where only media processing is left. */
export class ProcessingWaitError extends NetworkWaitError {
  constructor(message: string, waitMs: number) {
    super(message, waitMs);
    this.name = 'ProcessingWaitError';
  }
}

/**
 * A rate limit with a retry-after is waited without spending one of the job's attempts while the segment
 * has been sent at most this many times (its durable `attempts` counter): a network that keeps answering
 * 429 still ends in the ordinary retries, and the post fails after them instead of waiting forever.
 */
export const MAX_FREE_RATE_LIMIT_WAITS = 20;

/**
 * Retry delays: what the network asked for (up to a day and an hour: YouTube's daily quota resets at
 * midnight Pacific Time, up to 24 h away), else exponential from the base, capped at 5 minutes.
 */
export const MAX_NETWORK_WAIT_MS = 25 * 60 * 60_000;
export function publishBackoff(baseMs: number) {
  return (attemptsMade: number, _type?: string, err?: Error): number => {
    if (err instanceof RetryLaterError && err.retryAfterMs !== undefined)
      return Math.min(Math.max(err.retryAfterMs, 100), MAX_NETWORK_WAIT_MS);
    return Math.min(baseMs * 2 ** Math.max(0, attemptsMade - 1), 5 * 60_000);
  };
}
