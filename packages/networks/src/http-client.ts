import { assertDeliverableUrl, ForbiddenAddressError, guardedLookup } from '@sps/safe-fetch';
import got, {
  type Got,
  type HandlerFunction,
  HTTPError,
  type Progress,
  RequestError,
  TimeoutError,
} from 'got';
import type { TNetworkFailure } from './connector.js';
import { LeanHttpError, LeanRequestError } from './lean-http.js';

const MAX_BODY = 500;

/** Provider error bodies are stored and shown; keep them short and never unbounded. */
export function truncateBody(body: unknown): string {
  const text = typeof body === 'string' ? body : JSON.stringify(body ?? '');
  return text.length > MAX_BODY ? `${text.slice(0, MAX_BODY)}…` : text;
}

/**
 * Answers read from a server an API user chose (a Mastodon instance, a Bluesky PDS). A status, a record,
 * an instance description or a media answer is a few kilobytes; the rest is never downloaded.
 */
export const CHOSEN_HOST_MAX_ANSWER_BYTES = 1024 * 1024;

export interface THttpClientOptions {
  /**
   * The base URL came from an API user rather than the operator's `NETWORK_<NAME>_BASE_URL`: every
   * connection is resolved through the address guard (public addresses only, checked at connect time, so
   * a later DNS answer cannot point it inward) and answers are cut off at `maxAnswerBytes`. The caller
   * checks the URL itself first (`assertDeliverableUrl`: HTTPS, no private IP literal).
   */
  chosenByUser?: boolean;
  /** Default CHOSEN_HOST_MAX_ANSWER_BYTES for hosts chosen by users, unbounded otherwise. */
  maxAnswerBytes?: number;
}

/** The message of the cancel that ends an answer past its bound (recognised by classifyHttpError). */
const TOO_LARGE = 'answer over the size bound';

/**
 * Ends any request whose answer passes `maxBytes` (its Content-Length first, then the bytes as they
 * arrive), got's documented way to bound a download through a handler:
 * https://github.com/sindresorhus/got/blob/main/documentation/examples/advanced-creation.js
 */
export function answerBound(maxBytes: number): HandlerFunction {
  return (options, next) => {
    const pending = next(options);
    // A promise (CancelableRequest) or a stream (Request): both emit downloadProgress.
    const request = pending as unknown as {
      on(event: 'downloadProgress', listener: (progress: Progress) => void): unknown;
      cancel?: (reason?: string) => void;
      destroy?: (error?: Error) => void;
    };
    request.on('downloadProgress', ({ transferred, total }) => {
      if (transferred <= maxBytes && (total === undefined || total <= maxBytes)) return;
      // The request's own options travel with its error, so the classifier can tell this cancel apart.
      options.context[TOO_LARGE] = true;
      if (options.isStream) request.destroy?.(new Error(TOO_LARGE));
      else request.cancel?.(TOO_LARGE);
    });
    return pending;
  };
}

/**
 * One got instance per connector: no automatic retries (the publisher decides what to retry,
 * so a request is never silently sent twice), a bounded timeout, JSON bodies.
 */
export function createHttpClient(baseUrl: string, timeoutMs = 15_000, options: THttpClientOptions = {}): Got {
  const maxBytes =
    options.maxAnswerBytes ?? (options.chosenByUser ? CHOSEN_HOST_MAX_ANSWER_BYTES : undefined);
  return got.extend({
    prefixUrl: baseUrl.replace(/\/+$/, ''),
    retry: { limit: 0 },
    timeout: { request: timeoutMs },
    throwHttpErrors: true,
    followRedirect: false,
    responseType: 'json',
    headers: { 'user-agent': 'social-post-service/0.1' },
    ...(options.chosenByUser ? { dnsLookup: guardedLookup(false) as never } : {}),
    // Counted as it arrives, so nothing is inflated past the bound either.
    ...(maxBytes !== undefined ? { handlers: [answerBound(maxBytes)] } : {}),
  });
}

/** Whether a base URL is on the operator's configured host (unparseable counts as another host). */
export function sameOrigin(url: string, configured: string | undefined): boolean {
  if (!configured) return false;
  try {
    return new URL(url).origin === new URL(configured).origin;
  } catch {
    return false;
  }
}

/**
 * A base URL an API user chose, checked before any request: HTTPS and not a private IP literal (names
 * are checked at each connection by the guarded lookup). The failure to report when it is not.
 */
export function chosenHostProblem(baseUrl: string, network: string): TNetworkFailure | null {
  try {
    assertDeliverableUrl(new URL(baseUrl), false);
    return null;
  } catch (error) {
    const reason = error instanceof ForbiddenAddressError ? error.message : 'the URL is not valid';
    return {
      kind: 'rejected',
      message: `${network} server ${truncateBody(baseUrl)} is not a public HTTPS address (${reason}); nothing was sent. Reconnect the account with its server's public https:// URL.`,
    };
  }
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

/** The answer of a call that failed with a non-2xx status (through got or the lean client), else null. */
export function failedAnswer(
  error: unknown,
): { statusCode: number; body: unknown; headers: Record<string, string | string[] | undefined> } | null {
  if (error instanceof HTTPError) return error.response;
  if (error instanceof LeanHttpError) return error.response;
  return null;
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
  const answer = failedAnswer(error);
  if (answer) {
    const status = answer.statusCode;
    const body = answer.body;
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
      const after = retryAfterMs(answer.headers);
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
  const code = (error as { code?: string } | null)?.code;
  if (error instanceof ForbiddenAddressError || code === 'EFORBIDDENADDRESS') {
    // The guarded lookup refused the server's address before connecting: nothing was sent.
    return {
      kind: 'rejected',
      message: `${network}'s server resolves to an address that is not public; nothing was sent. Reconnect the account with its server's public https:// URL.`,
    };
  }
  if (error instanceof LeanRequestError) return leanFailure(error, network);
  if (error instanceof RequestError && error.options?.context?.[TOO_LARGE] === true) return tooLarge(network);
  if (error instanceof TimeoutError) return timedOut(network);
  if (error instanceof RequestError) return unreachable(network, error.code);
  return {
    kind: 'transient',
    message: `${network} call failed: ${error instanceof Error ? error.message : String(error)}`,
  };
}

function tooLarge(network: string): TNetworkFailure {
  return {
    kind: 'transient',
    outcomeUnknown: true,
    message: `${network} answered with more data than any answer of its API holds; it was cut off. It will be retried.`,
  };
}

function timedOut(network: string): TNetworkFailure {
  return {
    kind: 'transient',
    outcomeUnknown: true,
    message: `${network} did not answer in time; the post may or may not have been published. Check the ${network} account before retrying.`,
  };
}

/** Connection refused/reset before an answer: the request may have been written, unless it never connected. */
function unreachable(network: string, code: string): TNetworkFailure {
  const neverConnected = ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN'].includes(code);
  return {
    kind: 'transient',
    ...(neverConnected ? {} : { outcomeUnknown: true }),
    message: `Could not reach ${network} (${code}). It will be retried automatically.`,
  };
}

function leanFailure(error: LeanRequestError, network: string): TNetworkFailure {
  if (error.reason === 'timeout') return timedOut(network);
  if (error.reason === 'too_large') return tooLarge(network);
  return unreachable(network, error.code);
}
