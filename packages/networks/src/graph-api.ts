import { HTTPError } from 'got';
import type { TNetworkFailure } from './connector.js';
import { classifyHttpError } from './http-client.js';

// Error conventions shared by Meta's Graph APIs (Facebook pages, Instagram, Threads).

/** Graph API throttling codes: they arrive as HTTP 400/403, not only as 429. */
const RATE_LIMIT_CODES = new Set([4, 17, 32, 613]);
/** Code 190 (OAuthException): an invalid or expired token, even when answered with HTTP 400. */
const AUTH_CODE = 190;

export function graphErrorCode(body: unknown): number | undefined {
  return typeof body === 'object' && body !== null
    ? (body as { error?: { code?: number } }).error?.code
    : undefined;
}

/** Graph announces when throttling ends in minutes, inside JSON usage headers. */
function regainAccessMs(
  headers: Record<string, string | string[] | undefined>,
  usageHeaders: readonly string[],
): number | undefined {
  for (const name of usageHeaders) {
    const raw = headers[name];
    if (typeof raw !== 'string') continue;
    const minutes = [...raw.matchAll(/"estimated_time_to_regain_access"\s*:\s*(\d+)/g)].map((m) =>
      Number(m[1]),
    );
    if (minutes.length > 0) return Math.max(...minutes) * 60_000;
  }
  return undefined;
}

/**
 * A Graph API call's failure: the generic HTTP classification, with code 190 as an expired token and the
 * throttling codes as `rate_limited` (waiting as long as the `usageHeaders` say, when they say).
 */
export function classifyGraphError(
  err: unknown,
  network: string,
  usageHeaders: readonly string[],
): TNetworkFailure {
  const failure = classifyHttpError(err, {
    network,
    isAuthError: (_status, body) => graphErrorCode(body) === AUTH_CODE,
  });
  if (failure.kind !== 'rejected' || !(err instanceof HTTPError)) return failure;
  const code = graphErrorCode(err.response.body);
  if (code === undefined || !RATE_LIMIT_CODES.has(code)) return failure;
  const after = regainAccessMs(err.response.headers, usageHeaders);
  return {
    ...failure,
    kind: 'rate_limited',
    ...(after !== undefined ? { retryAfterMs: after } : {}),
    message: `${network} rate limit reached (code ${code}). The post will be retried${after !== undefined ? ` in ${Math.ceil(after / 1000)} s` : ' later'}.`,
  };
}
