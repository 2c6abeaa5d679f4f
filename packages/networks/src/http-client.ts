import got, { type Got, HTTPError, RequestError, TimeoutError } from 'got';
import type { TNetworkFailure } from './connector.js';

const MAX_BODY = 500;

/** Provider error bodies are stored and shown; keep them short and never unbounded. */
export function truncateBody(body: unknown): string {
  const text = typeof body === 'string' ? body : JSON.stringify(body ?? '');
  return text.length > MAX_BODY ? `${text.slice(0, MAX_BODY)}…` : text;
}

/**
 * One got instance per connector: no automatic retries (the publisher decides what to retry,
 * so a request is never silently sent twice), a bounded timeout, JSON bodies.
 */
export function createHttpClient(baseUrl: string, timeoutMs = 15_000): Got {
  return got.extend({
    prefixUrl: baseUrl.replace(/\/+$/, ''),
    retry: { limit: 0 },
    timeout: { request: timeoutMs },
    throwHttpErrors: true,
    followRedirect: false,
    responseType: 'json',
    headers: { 'user-agent': 'social-post-service/0.1' },
  });
}

/** A step of a multi-call publish: its value, or the failure that ends the publish. */
export type TStep<T> = { ok: true; value: T } | { ok: false; failure: TNetworkFailure };

function retryAfterMs(headers: Record<string, string | string[] | undefined>): number | undefined {
  const raw = headers['retry-after'];
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (value) {
    const seconds = Number(value);
    if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
    const date = Date.parse(value);
    if (Number.isFinite(date)) return Math.max(0, date - Date.now());
  }
  // X and others announce the reset as epoch seconds.
  const reset = headers['x-rate-limit-reset'] ?? headers['x-ratelimit-reset'];
  const resetValue = Array.isArray(reset) ? reset[0] : reset;
  if (resetValue && /^\d+$/.test(resetValue)) {
    const n = Number(resetValue);
    return n > 1e9 ? Math.max(0, n * 1000 - Date.now()) : n * 1000;
  }
  return undefined;
}

export interface TClassifyHints {
  /** Network name for messages ("X", "Bluesky"). */
  network: string;
  /** Classify by the network's own error body (e.g. Slack answers 200 with `ok: false`). */
  isAuthError?: (status: number, body: unknown) => boolean;
}

/**
 * Sorts a failed call into a failure kind. 401 (and network-specific auth errors) mean the token
 * expired; 429 is rate limited with the network's retry-after; other 4xx are permanent rejections;
 * 5xx, connection errors and timeouts are transient. A timeout after the request was written means
 * the network may have the post: `outcomeUnknown` keeps the publisher from blindly resending.
 */
export function classifyHttpError(error: unknown, hints: TClassifyHints): TNetworkFailure {
  const { network } = hints;
  if (error instanceof HTTPError) {
    const status = error.response.statusCode;
    const body = error.response.body;
    const truncated = truncateBody(body);
    if (status === 401 || hints.isAuthError?.(status, body)) {
      return {
        kind: 'auth_expired',
        status,
        body: truncated,
        message: `${network} rejected the account's token (HTTP ${status}). Reconnect the ${network} account and retry.`,
      };
    }
    if (status === 429) {
      const after = retryAfterMs(error.response.headers);
      return {
        kind: 'rate_limited',
        status,
        body: truncated,
        ...(after !== undefined ? { retryAfterMs: after } : {}),
        message: `${network} rate limit reached. The post will be retried${after !== undefined ? ` in ${Math.ceil(after / 1000)} s` : ' later'}.`,
      };
    }
    if (status >= 500) {
      return {
        kind: 'transient',
        status,
        body: truncated,
        message: `${network} had a server error (HTTP ${status}). It will be retried automatically.`,
      };
    }
    return {
      kind: 'rejected',
      status,
      body: truncated,
      message: `${network} rejected the post (HTTP ${status}): ${truncated}. Fix the content or account and retry.`,
    };
  }
  if (error instanceof TimeoutError) {
    return {
      kind: 'transient',
      outcomeUnknown: true,
      message: `${network} did not answer in time; the post may or may not have been published. Check the ${network} account before retrying.`,
    };
  }
  if (error instanceof RequestError) {
    // Connection refused/reset before a response: the request may have been written, unless it never connected.
    const neverConnected = ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN'].includes(error.code);
    return {
      kind: 'transient',
      ...(neverConnected ? {} : { outcomeUnknown: true }),
      message: `Could not reach ${network} (${error.code}). It will be retried automatically.`,
    };
  }
  return {
    kind: 'transient',
    message: `${network} call failed: ${error instanceof Error ? error.message : String(error)}`,
  };
}
