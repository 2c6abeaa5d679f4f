import { randomUUID } from 'node:crypto';
import { apiError, SpsTransportError } from './errors.js';
import { OPERATIONS } from './generated/operations.js';
import type { TCallInput, TCallOptions, TOperationId, TResultOf } from './operation-types.js';
import {
  DEFAULT_RETRY,
  isRetryStatus,
  mayRetry,
  parseRetryAfter,
  retryDelay,
  sleep,
  type TRetryOptions,
} from './retry.js';

/**
 * The calls the API dedupes by `Idempotency-Key` (the operating contract's "Idempotent requests"): every create
 * and publish. The client sends a key on each by default, which also makes them safe to retry.
 */
export const KEYED_OPERATIONS: ReadonlySet<TOperationId> = new Set<TOperationId>([
  'createPostA',
  'publishPostA',
  'createPostB',
  'publishPostB',
  'createWebhookB',
]);

/** What `onRetry` is told before each wait. */
export interface TRetryEvent {
  operationId: TOperationId;
  method: string;
  url: string;
  /** The attempt that failed (1 for the first request). */
  attempt: number;
  /** The status of the failed attempt; undefined when no answer came (connection error, timeout). */
  status: number | undefined;
  /** The wait before the next attempt, in milliseconds (`Retry-After` honoured). */
  delayMs: number;
  /** The key sent with every attempt of this call, when it has one. */
  idempotencyKey: string | undefined;
}

export interface TClientOptions {
  /** The service's base URL, e.g. `https://posts.example.com` (a path prefix is kept). */
  baseUrl: string;
  /** An API key; sent as `Authorization: Bearer <key>` to both variants. */
  apiKey: string;
  /** Headers sent with every call. */
  headers?: Record<string, string>;
  /** Retry settings for every call (see TRetryOptions); `false` sends each request once. */
  retry?: Partial<TRetryOptions> | false;
  /** How long one attempt may take, answer body included (default 30000 ms). */
  timeoutMs?: number;
  /** Called before each retry's wait (for logs and metrics). */
  onRetry?: (event: TRetryEvent) => void;
  /** The fetch to use (default: the global fetch of Node 20+). */
  fetch?: typeof fetch;
}

function buildUrl(baseUrl: string, template: string, input: TCallInput<TOperationId>): string {
  const path = template.replace(/\{([^}]+)\}/g, (_match, name: string) => {
    const value = (input.path as Record<string, string> | undefined)?.[name];
    if (typeof value !== 'string' || value === '') throw new TypeError(`path parameter ${name} is required`);
    return encodeURIComponent(value);
  });
  const url = new URL(baseUrl.replace(/\/+$/, '') + path);
  for (const [name, value] of Object.entries((input.query ?? {}) as Record<string, unknown>)) {
    if (value !== undefined && value !== null) url.searchParams.set(name, String(value));
  }
  return url.toString();
}

function retrySettings(
  client: TClientOptions['retry'],
  call: TCallOptions['retry'],
): TRetryOptions | undefined {
  if (client === false || call === false) return undefined;
  return { ...DEFAULT_RETRY, ...client, ...call };
}

function headersOf(response: Response): Record<string, string> {
  const out: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    out[name] = value;
  });
  return out;
}

/** A 409 saying the first request with this key is still running: worth waiting for, with the same key. */
function isKeyInUse(status: number, text: string): boolean {
  return status === 409 && text.includes('idempotency_key_in_use');
}

/** Sends one call of `operationId`, with retries, and returns the parsed success body or throws a typed error. */
export async function send<Id extends TOperationId>(
  options: TClientOptions,
  operationId: Id,
  input: TCallInput<Id>,
): Promise<TResultOf<Id>> {
  const op = OPERATIONS[operationId];
  const url = buildUrl(options.baseUrl, op.path, input as TCallInput<TOperationId>);
  const key =
    KEYED_OPERATIONS.has(operationId) && input.idempotencyKey !== false
      ? (input.idempotencyKey ?? randomUUID())
      : undefined;
  const headers: Record<string, string> = {
    accept: 'application/json',
    ...options.headers,
    ...input.headers,
    authorization: `Bearer ${options.apiKey}`,
  };
  const body = input.body === undefined ? undefined : JSON.stringify(input.body);
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (key !== undefined) headers['idempotency-key'] = key;

  const retry = retrySettings(options.retry, input.retry);
  const maxAttempts = retry && mayRetry(op.method, key !== undefined) ? Math.max(1, retry.maxAttempts) : 1;
  const doFetch = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const described = { operationId, method: op.method, url };

  const wait = async (attempt: number, status: number | undefined, retryAfterMs?: number) => {
    const delayMs = retry ? retryDelay(attempt, retryAfterMs, retry) : undefined;
    if (delayMs === undefined) return false;
    options.onRetry?.({ ...described, attempt, status, delayMs, idempotencyKey: key });
    await sleep(delayMs, input.signal);
    return true;
  };

  for (let attempt = 1; ; attempt += 1) {
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = input.signal ? AbortSignal.any([input.signal, timeout]) : timeout;
    let response: Response;
    let text: string;
    try {
      response = await doFetch(url, { method: op.method, headers, body, signal });
      text = await response.text();
    } catch (error) {
      // The caller's own abort ends the call; a refused connection or a timeout may be tried again.
      if (input.signal?.aborted) throw input.signal.reason;
      if (attempt < maxAttempts && (await wait(attempt, undefined))) continue;
      const reason = timeout.aborted ? `no answer within ${timeoutMs} ms` : String(error);
      throw new SpsTransportError(reason, { ...described, attempts: attempt }, error);
    }
    if (response.ok) {
      return (text === '' ? undefined : JSON.parse(text)) as TResultOf<Id>;
    }
    const retryable =
      isRetryStatus(response.status) || (key !== undefined && isKeyInUse(response.status, text));
    if (retryable && attempt < maxAttempts) {
      const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
      if (await wait(attempt, response.status, retryAfterMs)) continue;
    }
    throw apiError(op.variant, text, {
      ...described,
      status: response.status,
      headers: headersOf(response),
      attempts: attempt,
    });
  }
}
