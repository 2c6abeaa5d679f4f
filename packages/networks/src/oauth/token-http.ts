import got, { HTTPError, RequestError } from 'got';
import { assertDeliverableUrl, ForbiddenAddressError, guardedLookup } from '../address-guard.js';
import { OAuthError } from './oauth-types.js';

/** Network error bodies are stored and logged truncated, and never include the request (tokens). */
function truncate(text: string): string {
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

function errorCodeOf(body: unknown): { code?: string; description?: string } {
  if (!body || typeof body !== 'object') return {};
  const b = body as Record<string, unknown>;
  // RFC 6749 `{error, error_description}`; Meta `{error: {message, type, code}}`; TikTok the RFC shape.
  if (typeof b.error === 'string')
    return {
      code: b.error,
      ...(typeof b.error_description === 'string' ? { description: b.error_description } : {}),
    };
  if (b.error && typeof b.error === 'object') {
    const e = b.error as Record<string, unknown>;
    return {
      ...(e.code !== undefined ? { code: String(e.code) } : {}),
      ...(typeof e.message === 'string' ? { description: e.message } : {}),
    };
  }
  return {};
}

/**
 * Classifies a token endpoint's refusal. Definitive: `invalid_grant`; X's `invalid_request` (its answer
 * to a spent or revoked refresh token, https://docs.x.com/fundamentals/authentication/oauth-2-0/authorization-code);
 * Meta's code 190 (invalid or expired token, https://developers.facebook.com/docs/graph-api/guides/error-handling);
 * any 401. A 5xx, 429 or a timeout is transient.
 */
export function classifyTokenError(
  status: number | undefined,
  body: unknown,
  options: { invalidRequestIsRefusal?: boolean } = {},
): OAuthError {
  const { code, description } = errorCodeOf(body);
  const detail = truncate([code, description].filter(Boolean).join(': ') || `HTTP ${status ?? '?'}`);
  if (status === undefined || status >= 500 || status === 429 || status === 408)
    return new OAuthError('transient', `The token endpoint is unavailable (${detail})`, code, status);
  if (
    status === 401 ||
    code === 'invalid_grant' ||
    code === '190' ||
    (options.invalidRequestIsRefusal && code === 'invalid_request')
  )
    return new OAuthError('refused', `The network refused the token (${detail})`, code, status);
  return new OAuthError('invalid', `The network refused the request (${detail})`, code, status);
}

/** Turns a thrown got error (or anything else) into an OAuthError. */
export function asOAuthError(
  error: unknown,
  options: { invalidRequestIsRefusal?: boolean } = {},
): OAuthError {
  if (error instanceof OAuthError) return error;
  if (error instanceof ForbiddenAddressError || (error as { code?: string }).code === 'EFORBIDDENADDRESS')
    return new OAuthError('invalid', 'The server address is not a public HTTPS address', 'forbidden_address');
  if (error instanceof HTTPError) {
    let body: unknown = error.response.body;
    if (typeof body === 'string') {
      try {
        body = JSON.parse(body);
      } catch {
        // not JSON: classified by status alone
      }
    }
    return classifyTokenError(error.response.statusCode, body, options);
  }
  if (error instanceof RequestError)
    return new OAuthError('transient', `The network could not be reached (${error.code ?? 'error'})`);
  return new OAuthError('transient', `Token request failed (${(error as Error).message})`);
}

export interface TJsonRequest {
  method: 'GET' | 'POST';
  url: string;
  timeoutMs: number;
  form?: Record<string, string>;
  searchParams?: Record<string, string>;
  bearer?: string;
  /** Extra request headers (LinkedIn's version and Rest.li protocol headers). */
  headers?: Record<string, string>;
  basic?: { username: string; password: string };
  invalidRequestIsRefusal?: boolean;
  /**
   * The URL came from an API user (a Mastodon instance, a Bluesky PDS): HTTPS only and public addresses
   * only, checked at connect time like webhook deliveries.
   */
  userChosenHost?: boolean;
}

/**
 * One JSON request to a token or identity endpoint, bounded in time and size, without retries (the
 * caller decides: a refresh job retries transient failures, a callback reports them).
 */
export async function jsonRequest<T = Record<string, unknown>>(req: TJsonRequest): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json', ...req.headers };
  if (req.bearer) headers.authorization = `Bearer ${req.bearer}`;
  if (req.basic)
    headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(req.basic.username)}:${encodeURIComponent(req.basic.password)}`).toString('base64')}`;
  try {
    if (req.userChosenHost) assertDeliverableUrl(new URL(req.url), false);
    const body = await got(req.url, {
      method: req.method,
      ...(req.userChosenHost ? { dnsLookup: guardedLookup(false) as never } : {}),
      headers,
      ...(req.form ? { form: req.form } : {}),
      ...(req.searchParams ? { searchParams: req.searchParams } : {}),
      timeout: { request: req.timeoutMs },
      retry: { limit: 0 },
      followRedirect: false,
      responseType: 'json',
    }).json<T>();
    // TikTok and Slack can answer 200 with an error object.
    const { code } = errorCodeOf(body);
    const b = body as Record<string, unknown>;
    if ((typeof b.error === 'string' && b.error !== 'ok' && b.error !== '') || b.ok === false)
      throw classifyTokenError(400, body, req);
    if (code && typeof b.error === 'object' && (b.error as Record<string, unknown>).code !== 'ok')
      throw classifyTokenError(400, body, req);
    return body;
  } catch (error) {
    throw asOAuthError(error, req);
  }
}

/** Bounds a promise from a library without its own timeout (arctic uses fetch without a signal). */
export async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new OAuthError('transient', `The token endpoint did not answer within ${ms} ms`)),
          ms,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
