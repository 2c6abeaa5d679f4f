import { assertDeliverableUrl, ForbiddenAddressError, guardedLookup } from '@sps/safe-fetch';
import got, { HTTPError, RequestError } from 'got';
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
   * only, checked for every connection (the guarded lookup), so a later DNS answer cannot point it inward.
   */
  userChosenHost?: boolean;
  /** Ends the request and its connection when aborted (a token refresh whose lock is running out). */
  signal?: AbortSignal | undefined;
  /** The most of the answer that is read; past it the connection is dropped. Default JSON_ANSWER_MAX_BYTES. */
  maxBytes?: number;
}

/**
 * The most of a token or identity answer that is read. Real ones are a few kilobytes (Facebook's list of
 * Pages with their tokens the largest, about 1 KB a Page and 25 a page of the list).
 */
export const JSON_ANSWER_MAX_BYTES = 256 * 1024;

function parseJson(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
}

/**
 * One JSON request to a token or identity endpoint, without retries (the caller decides: a refresh job
 * retries transient failures, a callback reports them). Bounded: `timeoutMs` for the whole exchange (got
 * destroys the socket when it runs out, so a trickling answer stops there), at most `maxBytes` of the
 * answer (counted while it arrives, compressed answers not asked for nor inflated), redirects never
 * followed (a token endpoint that redirects is refused, it does not choose where the code goes next).
 */
export async function jsonRequest<T = Record<string, unknown>>(req: TJsonRequest): Promise<T> {
  const headers: Record<string, string> = {
    accept: 'application/json',
    'user-agent': 'social-post-service/0.1',
    ...req.headers,
  };
  if (req.bearer) headers.authorization = `Bearer ${req.bearer}`;
  if (req.basic)
    headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(req.basic.username)}:${encodeURIComponent(req.basic.password)}`).toString('base64')}`;
  const maxBytes = req.maxBytes ?? JSON_ANSWER_MAX_BYTES;
  let tooLarge = false;
  try {
    if (req.userChosenHost) assertDeliverableUrl(new URL(req.url), false);
    const request = got(req.url, {
      method: req.method,
      ...(req.userChosenHost ? { dnsLookup: guardedLookup(false) as never } : {}),
      headers,
      ...(req.form ? { form: req.form } : {}),
      ...(req.searchParams ? { searchParams: req.searchParams } : {}),
      ...(req.signal ? { signal: req.signal } : {}),
      timeout: { request: req.timeoutMs },
      retry: { limit: 0 },
      followRedirect: false,
      throwHttpErrors: false,
      // No Accept-Encoding is sent and nothing is inflated: the byte count below is what is held.
      decompress: false,
      responseType: 'buffer',
    });
    // got's documented way to bound a download: cancel from the progress events (Content-Length first).
    // https://github.com/sindresorhus/got/blob/main/documentation/examples/advanced-creation.js
    request.on('downloadProgress', ({ transferred, total }) => {
      if (transferred > maxBytes || (total !== undefined && total > maxBytes)) {
        tooLarge = true;
        request.cancel();
      }
    });
    const response = await request;
    const status = response.statusCode;
    if (status >= 300 && status < 400)
      throw new OAuthError(
        'invalid',
        `The endpoint answered with a redirect (HTTP ${status}), which is not followed`,
        undefined,
        status,
      );
    const body = parseJson(response.body);
    if (status >= 400) throw classifyTokenError(status, body, req);
    // A maintenance page or a proxy's answer in place of JSON: tried again later, like an outage.
    if (!body || typeof body !== 'object')
      throw new OAuthError('transient', `The endpoint did not answer a JSON object (HTTP ${status})`);
    // TikTok and Slack can answer 200 with an error object.
    const { code } = errorCodeOf(body);
    const b = body as Record<string, unknown>;
    if ((typeof b.error === 'string' && b.error !== 'ok' && b.error !== '') || b.ok === false)
      throw classifyTokenError(400, body, req);
    if (code && typeof b.error === 'object' && (b.error as Record<string, unknown>).code !== 'ok')
      throw classifyTokenError(400, body, req);
    return body as T;
  } catch (error) {
    if (tooLarge)
      throw new OAuthError('invalid', `The endpoint's answer is larger than ${maxBytes} bytes`, 'too_large');
    if (req.signal?.aborted && !(error instanceof OAuthError))
      throw new OAuthError('transient', 'The request was abandoned before the endpoint answered');
    throw asOAuthError(error, req);
  }
}
