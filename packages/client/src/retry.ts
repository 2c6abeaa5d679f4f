/**
 * When and how long to wait before sending a request again. The spec's advice for a 429: wait at least
 * `Retry-After` seconds; without the header wait 1, 2, 4, 8 … seconds up to 60, plus 0 to 1 s of random jitter.
 */
export interface TRetryOptions {
  /** Requests sent at most, the first one included (default 4; 1 turns retries off). */
  maxAttempts: number;
  /** The first wait when the answer has no `Retry-After` (default 1000 ms); doubled on each retry. */
  baseDelayMs: number;
  /** The longest wait computed without `Retry-After` (default 60000 ms). */
  maxDelayMs: number;
  /** Up to this much random time is added to every wait (default 1000 ms), so clients do not retry in step. */
  jitterMs: number;
  /** A `Retry-After` longer than this is not waited for: the error is thrown at once (default 60000 ms). */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY: TRetryOptions = {
  maxAttempts: 4,
  baseDelayMs: 1000,
  maxDelayMs: 60_000,
  jitterMs: 1000,
  maxRetryAfterMs: 60_000,
};

/** Answers worth another try: a timeout, a rate limit, and server or gateway errors (the spec: "safe to retry"). */
const RETRY_STATUSES = new Set([408, 429, 500, 502, 503, 504]);

const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

/**
 * Only a request that can be sent twice without doing twice is retried: an idempotent method, or one carrying
 * an `Idempotency-Key` (the API answers the first answer again for the same key and body).
 */
export function mayRetry(method: string, hasIdempotencyKey: boolean): boolean {
  return hasIdempotencyKey || IDEMPOTENT_METHODS.has(method.toUpperCase());
}

export function isRetryStatus(status: number): boolean {
  return RETRY_STATUSES.has(status);
}

/** `Retry-After` in milliseconds: delta-seconds or an HTTP date (RFC 9110 §10.2.3); undefined when absent or bad. */
export function parseRetryAfter(
  value: string | null | undefined,
  now: number = Date.now(),
): number | undefined {
  if (value === null || value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  // An HTTP date names its weekday and month; V8 would also read "1.5" or "-3" as dates.
  if (!/^[A-Za-z]{3}, /.test(trimmed)) return undefined;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/**
 * The wait before retry number `retry` (1 for the first retry): the server's `Retry-After` when it gave one,
 * else exponential backoff; plus jitter. Undefined when the server asks for longer than `maxRetryAfterMs`.
 */
export function retryDelay(
  retry: number,
  retryAfterMs: number | undefined,
  options: TRetryOptions,
  random: () => number = Math.random,
): number | undefined {
  const jitter = Math.floor(random() * options.jitterMs);
  if (retryAfterMs !== undefined) {
    if (retryAfterMs > options.maxRetryAfterMs) return undefined;
    return retryAfterMs + jitter;
  }
  const exponential = options.baseDelayMs * 2 ** Math.min(retry - 1, 30);
  return Math.min(exponential, options.maxDelayMs) + jitter;
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
