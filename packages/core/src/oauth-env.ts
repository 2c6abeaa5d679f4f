import { PLATFORMS, type TPlatform } from './platforms.js';

/** One network's OAuth app settings as the environment gives them (any may be missing). */
export interface TOAuthAppEnv {
  clientId?: string;
  clientSecret?: string;
  authorizeUrl?: string;
  tokenUrl?: string;
}

/**
 * `OAUTH_<NAME>_CLIENT_ID`, `OAUTH_<NAME>_CLIENT_SECRET`, `NETWORK_<NAME>_AUTHORIZE_URL` and
 * `NETWORK_<NAME>_TOKEN_URL` for every network (contract); the API and the publisher read the same.
 */
export function oauthAppsFromEnv(
  env: Record<string, string | undefined>,
): Partial<Record<TPlatform, TOAuthAppEnv>> {
  const out: Partial<Record<TPlatform, TOAuthAppEnv>> = {};
  for (const platform of PLATFORMS) {
    const name = platform.toUpperCase();
    const entry: TOAuthAppEnv = {};
    const clientId = env[`OAUTH_${name}_CLIENT_ID`];
    const clientSecret = env[`OAUTH_${name}_CLIENT_SECRET`];
    const authorizeUrl = env[`NETWORK_${name}_AUTHORIZE_URL`];
    const tokenUrl = env[`NETWORK_${name}_TOKEN_URL`];
    if (clientId) entry.clientId = clientId;
    if (clientSecret) entry.clientSecret = clientSecret;
    if (authorizeUrl) entry.authorizeUrl = authorizeUrl;
    if (tokenUrl) entry.tokenUrl = tokenUrl;
    for (const [key, value] of [
      [`NETWORK_${name}_AUTHORIZE_URL`, authorizeUrl],
      [`NETWORK_${name}_TOKEN_URL`, tokenUrl],
    ] as const) {
      if (value && !/^https?:\/\//.test(value))
        throw new Error(`Invalid environment: ${key}: must be an http(s) URL`);
    }
    if (Object.keys(entry).length > 0) out[platform] = entry;
  }
  return out;
}
