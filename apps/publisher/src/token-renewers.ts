import type { TPlatform, TSocialCredentials } from '@sps/core';
import type { TStoredToken } from '@sps/db';
import {
  oauthProviderOf,
  refreshBlueskySession,
  resolveOAuthApp,
  type TOAuthCall,
  type TTokenSet,
} from '@sps/networks';
import type { TTokenRefreshConfig } from './token-refresh-config.js';

export type TRenew = (c: TSocialCredentials, signal: AbortSignal) => Promise<TTokenSet>;

/** How each network's token is renewed with the operator's app (OAuth refresh) or Bluesky's session. */
export function createRenewers(config: TTokenRefreshConfig) {
  function callOf(platform: TPlatform): TOAuthCall | null {
    const app = resolveOAuthApp(platform, config.apps[platform]);
    if (!app) return null;
    return {
      platform,
      app,
      redirectUri: '',
      apiBaseUrl: config.baseUrls[platform],
      apiVersion: config.apiVersions?.[platform],
      timeoutMs: config.timeoutMs,
    };
  }

  /**
   * Bluesky keeps a session rather than OAuth tokens: refreshSession with the refresh JWT, or a sign-in
   * with the app password once that has ended (packages/networks/src/oauth/bluesky-session.ts).
   */
  function renewBluesky(
    stored: TStoredToken,
    credentials: TSocialCredentials,
    signal: AbortSignal,
  ): Promise<TTokenSet> {
    const configured = (config.baseUrls.bluesky ?? 'https://bsky.social').replace(/\/+$/, '');
    const serviceUrl = (stored.instanceUrl ?? configured).replace(/\/+$/, '');
    return refreshBlueskySession(
      {
        serviceUrl,
        // A DID or handle (the admin CLI's --external-id), else the account's name, as the connector used to sign in.
        identifier: stored.externalId || stored.accountName,
        timeoutMs: config.timeoutMs,
        userChosenHost: new URL(serviceUrl).origin !== new URL(configured).origin,
        signal,
      },
      credentials,
    );
  }

  /** The operator's OAuth variables a network's refresh needs and this process lacks. */
  function missingAppVariables(platform: TPlatform): string[] {
    const env = config.apps[platform] ?? {};
    const name = platform.toUpperCase();
    return [
      env.clientId ? null : `OAUTH_${name}_CLIENT_ID`,
      env.clientSecret ? null : `OAUTH_${name}_CLIENT_SECRET`,
    ].filter((v): v is string => v !== null);
  }

  /**
   * How this account's token is renewed: a renewer, `unconfigured` (the network refreshes, but this
   * process lacks the operator's app: a configuration problem, not the account's), or null when nothing
   * can renew it (the network has no refresh, or a rotating refresh token is missing).
   */
  function renewerOf(
    stored: TStoredToken,
    credentials: TSocialCredentials,
  ): TRenew | { unconfigured: string[] } | null {
    if (stored.platform === 'bluesky') return (c, signal) => renewBluesky(stored, c, signal);
    const provider = oauthProviderOf(stored.platform);
    if (!provider?.refresh || (!credentials.refreshToken && provider.rotatingRefresh)) return null;
    const call = callOf(stored.platform);
    if (!call) return { unconfigured: missingAppVariables(stored.platform) };
    const refresh = provider.refresh.bind(provider);
    return (c, signal) => refresh({ ...call, signal }, c);
  }

  return { renewerOf };
}
