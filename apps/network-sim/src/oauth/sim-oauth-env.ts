import { SIM_CLIENT_ID, SIM_CLIENT_SECRET } from './oauth-store.js';

/** Authorization page and token endpoint paths of each simulated network, under its `/<platform>` prefix. */
const PATHS: Record<string, { authorize: string; token: string }> = {
  TWITTER: { authorize: '/twitter/i/oauth2/authorize', token: '/twitter/2/oauth2/token' },
  LINKEDIN: { authorize: '/linkedin/oauth/v2/authorization', token: '/linkedin/oauth/v2/accessToken' },
  YOUTUBE: { authorize: '/youtube/o/oauth2/v2/auth', token: '/youtube/token' },
  TIKTOK: { authorize: '/tiktok/v2/auth/authorize/', token: '/tiktok/v2/oauth/token/' },
  THREADS: { authorize: '/threads/oauth/authorize', token: '/threads/oauth/access_token' },
  INSTAGRAM: { authorize: '/instagram/oauth/authorize', token: '/instagram/oauth/access_token' },
  FACEBOOK: { authorize: '/facebook/v25.0/dialog/oauth', token: '/facebook/v25.0/oauth/access_token' },
};

/**
 * The environment that points the service's OAuth flows at a running simulator: its client credentials
 * and each network's authorization page and token endpoint.
 */
export function simOAuthEnv(simUrl: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, paths] of Object.entries(PATHS)) {
    env[`OAUTH_${name}_CLIENT_ID`] = SIM_CLIENT_ID;
    env[`OAUTH_${name}_CLIENT_SECRET`] = SIM_CLIENT_SECRET;
    env[`NETWORK_${name}_AUTHORIZE_URL`] = `${simUrl}${paths.authorize}`;
    env[`NETWORK_${name}_TOKEN_URL`] = `${simUrl}${paths.token}`;
  }
  return env;
}
