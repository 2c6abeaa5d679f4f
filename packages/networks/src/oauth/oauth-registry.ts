import type { TPlatform, TSocialCredentials } from '@sps/core';
import { blueskyRefreshDueAt } from './bluesky-session.js';
import { mastodonOAuth } from './mastodon-oauth.js';
import { facebookOAuth, instagramOAuth, threadsOAuth } from './meta-providers.js';
import type { TOAuthApp, TOAuthProvider } from './oauth-types.js';
import { linkedinOAuth, tiktokOAuth, twitterOAuth, youtubeOAuth } from './standard-providers.js';

/** Networks connected through their own authorization page. */
export const OAUTH_PROVIDERS: Partial<Record<TPlatform, TOAuthProvider>> = {
  twitter: twitterOAuth,
  linkedin: linkedinOAuth,
  youtube: youtubeOAuth,
  tiktok: tiktokOAuth,
  threads: threadsOAuth,
  instagram: instagramOAuth,
  facebook: facebookOAuth,
  mastodon: mastodonOAuth,
};

/**
 * The networks' real authorization pages and token endpoints (`NETWORK_<NAME>_AUTHORIZE_URL` and
 * `_TOKEN_URL` override them; Mastodon's are on each instance).
 */
export const OAUTH_ENDPOINTS: Partial<Record<TPlatform, { authorizeUrl: string; tokenUrl: string }>> = {
  twitter: { authorizeUrl: 'https://x.com/i/oauth2/authorize', tokenUrl: 'https://api.x.com/2/oauth2/token' },
  linkedin: {
    authorizeUrl: 'https://www.linkedin.com/oauth/v2/authorization',
    tokenUrl: 'https://www.linkedin.com/oauth/v2/accessToken',
  },
  youtube: {
    authorizeUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
    tokenUrl: 'https://oauth2.googleapis.com/token',
  },
  tiktok: {
    authorizeUrl: 'https://www.tiktok.com/v2/auth/authorize/',
    tokenUrl: 'https://open.tiktokapis.com/v2/oauth/token/',
  },
  threads: {
    // The Authorization Window as Meta documents it now (threads.net redirects there).
    // https://developers.facebook.com/documentation/threads/get-started/get-access-tokens-and-permissions
    authorizeUrl: 'https://threads.com/oauth/authorize',
    tokenUrl: 'https://graph.threads.net/oauth/access_token',
  },
  instagram: {
    authorizeUrl: 'https://www.instagram.com/oauth/authorize',
    tokenUrl: 'https://api.instagram.com/oauth/access_token',
  },
  facebook: {
    authorizeUrl: 'https://www.facebook.com/v25.0/dialog/oauth',
    tokenUrl: 'https://graph.facebook.com/v25.0/oauth/access_token',
  },
};

/** Networks whose operator app needs `OAUTH_<NAME>_CLIENT_ID`/`_SECRET` (Mastodon registers its own per instance). */
export const OAUTH_APP_PLATFORMS = Object.keys(OAUTH_ENDPOINTS) as TPlatform[];

export function oauthProviderOf(platform: TPlatform): TOAuthProvider | undefined {
  return OAUTH_PROVIDERS[platform];
}

/**
 * The operator's app on a network with its endpoints resolved, or null when `OAUTH_<NAME>_CLIENT_ID` or
 * `_SECRET` is missing (then the network cannot be connected or refreshed by OAuth).
 */
export function resolveOAuthApp(
  platform: TPlatform,
  env: { clientId?: string; clientSecret?: string; authorizeUrl?: string; tokenUrl?: string } | undefined,
): TOAuthApp | null {
  const endpoints = OAUTH_ENDPOINTS[platform];
  if (!endpoints || !env?.clientId || !env.clientSecret) return null;
  return {
    clientId: env.clientId,
    clientSecret: env.clientSecret,
    authorizeUrl: env.authorizeUrl ?? endpoints.authorizeUrl,
    tokenUrl: env.tokenUrl ?? endpoints.tokenUrl,
  };
}

/**
 * When an account's token is next due for a refresh, whatever keeps it alive: its OAuth provider, or
 * Bluesky's session (refreshed ahead of the access JWT's `exp`). Null: never.
 */
export function refreshDueAtOf(
  platform: TPlatform,
  expiresAt: Date | null,
  issuedAt: Date | null,
  credentials: TSocialCredentials,
): Date | null {
  if (platform === 'bluesky') return blueskyRefreshDueAt(expiresAt, issuedAt, credentials);
  return OAUTH_PROVIDERS[platform]?.refreshDueAt(expiresAt, issuedAt, credentials) ?? null;
}
