import { createHash } from 'node:crypto';
import { AppError, validationError } from './app-error.js';

/** The request header (Stripe's name; draft-ietf-httpapi-idempotency-key-header). */
export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
/** Set on an answer that is a replay of the first one. */
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
/** How long a key is remembered. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/** 1–255 printable ASCII characters (space to tilde): what a header carries without encoding. */
const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

/**
 * The header's value(s) as a key, or a 400 naming the header. `values` is every occurrence of the header:
 * two keys on one request are refused rather than joined (Node joins unknown repeated headers with ", ").
 */
export function parseIdempotencyKey(values: readonly string[] | undefined): string | null {
  if (values === undefined || values.length === 0) return null;
  const fix = `Send one ${IDEMPOTENCY_HEADER} of 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters, e.g. a UUID, new for each operation and the same on its retries.`;
  if (values.length > 1) {
    throw validationError([{ field: IDEMPOTENCY_HEADER, message: 'must be sent once' }], fix);
  }
  const value = values[0] ?? '';
  if (!KEY_PATTERN.test(value)) {
    const message =
      value.length === 0
        ? 'must not be empty'
        : value.length > MAX_IDEMPOTENCY_KEY_LENGTH
          ? `must be at most ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`
          : 'must contain printable ASCII characters only';
    throw validationError([{ field: IDEMPOTENCY_HEADER, message }], fix);
  }
  return value;
}

/** Deeper bodies are refused (400 naming `body`) rather than walked: no route takes more than a few levels. */
export const MAX_FINGERPRINT_DEPTH = 32;

/** JSON with object keys sorted at every level: the same data gives the same text whatever the key order. */
export function canonicalJson(value: unknown, depth = 0): string {
  if (value === undefined) return 'null';
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (depth >= MAX_FINGERPRINT_DEPTH) {
    throw validationError([
      { field: 'body', message: `is nested more than ${MAX_FINGERPRINT_DEPTH} levels deep` },
    ]);
  }
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v, depth + 1)).join(',')}]`;
  const entries = Object.keys(value as Record<string, unknown>)
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k], depth + 1)}`);
  return `{${entries.join(',')}}`;
}

/**
 * What makes two requests "the same": the operation (route and variant), its path parameters and the
 * parsed JSON body, compared as data (key order and white space do not count). Headers and the query do not.
 */
export function requestFingerprint(
  operation: string,
  params: Record<string, unknown>,
  body: unknown,
): string {
  return createHash('sha256')
    .update(`${operation}\n${canonicalJson(params)}\n${canonicalJson(body ?? null)}`)
    .digest('hex');
}

/**
 * Whether an answer is remembered for the key. Successes are (with what they made), and so are 4xx
 * refusals of a request that ran (a missing post, a missing connected account, a plan): the same request
 * gets the same refusal. Not remembered, so the key can be retried at once: 400 (the request was malformed
 * and never ran, as Stripe does), 408/409/425/429 (try-again-later answers) and every 5xx (nothing was
 * made: a resource and its key record are written in one statement, so a failure before it left nothing).
 */
export function isRememberedStatus(status: number): boolean {
  if (status >= 200 && status < 300) return true;
  if (status >= 500 || status < 400) return false;
  return ![400, 401, 408, 409, 425, 429].includes(status);
}

export function idempotencyKeyInUse(): AppError {
  return new AppError(
    'idempotency_key_in_use',
    'A request with this Idempotency-Key is still being processed',
    {
      issues: [{ field: IDEMPOTENCY_HEADER, message: 'is in use by a request that has not finished' }],
      fix: 'Retry the same request with the same key in a few seconds; it then gets the first request’s answer.',
      details: { code: 'idempotency_key_in_use' },
    },
  );
}

export function idempotencyKeyReused(): AppError {
  return new AppError(
    'idempotency_key_reused',
    'This Idempotency-Key was already used for a different request in the last 24 hours',
    {
      issues: [{ field: IDEMPOTENCY_HEADER, message: 'was used with another route or body' }],
      fix: 'Use a new key for each new operation; send a retry with exactly the body of the first request.',
      details: { code: 'idempotency_key_reused' },
    },
  );
}
