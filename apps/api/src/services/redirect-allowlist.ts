import { AppError } from '@sps/core';
import { originOf } from '../http/origin.js';

/**
 * Where a connect flow may send the browser back (with `account_id` or `error`): only origins the operator
 * named (PUBLIC_URL's and CONNECT_REDIRECT_ORIGINS), or the service would redirect anywhere for anyone
 * holding a key, and a phishing page could pose as it.
 */
export function redirectAllowlist(origins: readonly string[]) {
  const allowed = (uri: string): boolean => {
    const origin = originOf(uri);
    return origin !== null && origins.includes(origin);
  };
  return {
    allowed,
    /** 400 naming `redirect_uri` unless it is on an allowed origin. */
    check(uri: string): void {
      if (allowed(uri)) return;
      throw new AppError('validation_error', 'redirect_uri is not on an allowed origin', {
        issues: [
          {
            field: 'redirect_uri',
            message: `must be on ${origins.join(' or ')} (PUBLIC_URL's origin or one in CONNECT_REDIRECT_ORIGINS)`,
          },
        ],
      });
    },
  };
}

/** The caller's redirect URI with the flow's outcome (`account_id` or `error`) added to its query. */
export function withQuery(uri: string, params: Record<string, string>): string {
  const url = new URL(uri);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return url.toString();
}
