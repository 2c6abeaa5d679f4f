import { AppError, secretBox, type TOAuthAppEnv, type TPlatform } from '@sps/core';
import type { TMastodonAppRepository } from '@sps/db';
import { MASTODON_SCOPES, OAUTH_ENDPOINTS, registerMastodonApp, type TOAuthCall } from '@sps/networks';

export interface TConnectConfig {
  /** `PUBLIC_URL`: redirect URIs are `${publicUrl}/oauth/callback/<platform>`. */
  publicUrl: string;
  /** Origins a connect's `redirect_uri` may point to (PUBLIC_URL's own and CONNECT_REDIRECT_ORIGINS). */
  redirectOrigins: string[];
  oauthApps: Partial<Record<TPlatform, TOAuthAppEnv>>;
  networkBaseUrls: Partial<Record<TPlatform, string>>;
  apiVersions: Partial<Record<TPlatform, string>>;
  timeoutMs: number;
  encryptionKey: Buffer;
}

/** A Mastodon app's secret opens only in its own row (instance and redirect URI are its key). */
function mastodonAppContext(instanceUrl: string, redirectUri: string): string {
  return secretBox.sealContext('mastodon_apps', `${instanceUrl} ${redirectUri}`);
}

export function notConfigured(platform: TPlatform, missing: string[]): string {
  return `Connecting ${platform} is not configured on this server: ${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} not set`;
}

/**
 * The call context of each network's authorization server: the operator's app (4xx naming what is not
 * configured), or for Mastodon the service's own app on the instance, registered on first use.
 */
export function createOAuthCalls(config: TConnectConfig, mastodonApps: TMastodonAppRepository) {
  const redirectUriOf = (platform: TPlatform) =>
    `${config.publicUrl.replace(/\/+$/, '')}/oauth/callback/${platform}`;

  /** Mastodon instances outside the operator's configured one must be public HTTPS servers. */
  function isUserChosen(instanceUrl: string): boolean {
    const configured = config.networkBaseUrls.mastodon;
    return !configured || new URL(configured).origin !== new URL(instanceUrl).origin;
  }

  async function mastodonCall(instanceUrl: string): Promise<TOAuthCall> {
    const redirectUri = redirectUriOf('mastodon');
    let app = await mastodonApps.find(instanceUrl, redirectUri);
    // An app registered before the service asked for more scopes (read:statuses) cannot grant them.
    const scopes = MASTODON_SCOPES.join(' ');
    if (!app || app.scopes !== scopes) {
      const registered = await registerMastodonApp(instanceUrl, redirectUri, {
        clientName: 'Social Post Service',
        website: config.publicUrl,
        timeoutMs: config.timeoutMs,
        userChosenHost: isUserChosen(instanceUrl),
      });
      app = await mastodonApps.save({
        instanceUrl,
        clientId: registered.clientId,
        clientSecretEncrypted: secretBox.seal(
          registered.clientSecret,
          config.encryptionKey,
          mastodonAppContext(instanceUrl, redirectUri),
        ),
        redirectUri,
        scopes,
      });
    }
    return {
      platform: 'mastodon',
      app: {
        clientId: app.clientId,
        clientSecret: secretBox.open(
          app.clientSecretEncrypted,
          config.encryptionKey,
          mastodonAppContext(instanceUrl, redirectUri),
        ),
        authorizeUrl: `${instanceUrl}/oauth/authorize`,
        tokenUrl: `${instanceUrl}/oauth/token`,
      },
      redirectUri,
      apiBaseUrl: instanceUrl,
      timeoutMs: config.timeoutMs,
      userChosenHost: isUserChosen(instanceUrl),
    };
  }

  /** The variables an OAuth network still needs before it can be connected (none for Mastodon). */
  function missingOf(platform: TPlatform): string[] {
    if (platform === 'mastodon') return [];
    const env = config.oauthApps[platform] ?? {};
    const name = platform.toUpperCase();
    return [
      env.clientId ? null : `OAUTH_${name}_CLIENT_ID`,
      env.clientSecret ? null : `OAUTH_${name}_CLIENT_SECRET`,
    ].filter((v): v is string => v !== null);
  }

  /** The call context of a network whose app the operator configured; 4xx naming what is missing. */
  function appCall(platform: TPlatform): TOAuthCall {
    const env = config.oauthApps[platform] ?? {};
    const missing = missingOf(platform);
    const endpoints = OAUTH_ENDPOINTS[platform];
    if (missing.length > 0 || !endpoints || !env.clientId || !env.clientSecret) {
      throw new AppError('network_unavailable', notConfigured(platform, missing), {
        issues: [{ field: 'platform', message: `${platform} needs ${missing.join(', ')} on the server` }],
        details: { platform, missing },
        fix: `The operator sets ${missing.join(' and ')} (see README, "Connecting accounts").`,
      });
    }
    return {
      platform,
      app: {
        clientId: env.clientId,
        clientSecret: env.clientSecret,
        authorizeUrl: env.authorizeUrl ?? endpoints.authorizeUrl,
        tokenUrl: env.tokenUrl ?? endpoints.tokenUrl,
      },
      redirectUri: redirectUriOf(platform),
      apiBaseUrl: config.networkBaseUrls[platform],
      apiVersion: config.apiVersions[platform],
      timeoutMs: config.timeoutMs,
    };
  }

  return { redirectUriOf, mastodonCall, missingOf, appCall };
}
