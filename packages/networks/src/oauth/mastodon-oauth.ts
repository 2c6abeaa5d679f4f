import { z } from 'zod';
import { parseAnswer, unusableAnswer, ZNetworkId, ZNetworkName, ZNetworkToken } from './answers.js';
import { buildAuthorizeUrl, codeGrant, credentialsOf } from './grants.js';
import { OAuthError, type TOAuthProvider } from './oauth-types.js';
import { jsonRequest } from './token-http.js';

/** read:statuses lets the publisher read a status back when its answer was lost (mastodon.connector.ts). */
export const MASTODON_SCOPES = ['read:accounts', 'read:statuses', 'write:statuses', 'write:media'] as const;

/** https://docs.joinmastodon.org/entities/Application/ (client_id and client_secret on creation). */
const ZRegisteredApp = z.object({ client_id: ZNetworkToken, client_secret: ZNetworkToken }).loose();
/** https://docs.joinmastodon.org/entities/Account/: id (a string of digits), acct, username. */
const ZAccount = z
  .object({ id: ZNetworkId, acct: ZNetworkName.optional(), username: ZNetworkName.optional() })
  .loose();

/**
 * Registers the service's app on a Mastodon instance (each server is its own authorization server).
 * https://docs.joinmastodon.org/methods/apps/#create
 */
export async function registerMastodonApp(
  instanceUrl: string,
  redirectUri: string,
  options: { clientName: string; website?: string; timeoutMs: number; userChosenHost: boolean },
): Promise<{ clientId: string; clientSecret: string }> {
  const answer = await jsonRequest<unknown>({
    method: 'POST',
    url: `${instanceUrl.replace(/\/+$/, '')}/api/v1/apps`,
    form: {
      client_name: options.clientName,
      redirect_uris: redirectUri,
      scopes: MASTODON_SCOPES.join(' '),
      ...(options.website ? { website: options.website } : {}),
    },
    timeoutMs: options.timeoutMs,
    userChosenHost: options.userChosenHost,
  });
  const body = parseAnswer(
    ZRegisteredApp,
    answer,
    () => new OAuthError('invalid', 'The instance did not register the app'),
  );
  return { clientId: body.client_id, clientSecret: body.client_secret };
}

/**
 * Mastodon: authorization code (PKCE S256, Mastodon 4.3+) against the instance's /oauth/authorize and
 * /oauth/token with the app registered there; tokens do not expire.
 * https://docs.joinmastodon.org/client/token/ https://docs.joinmastodon.org/methods/oauth/
 * The user: GET /api/v1/accounts/verify_credentials.
 */
export const mastodonOAuth: TOAuthProvider = {
  platform: 'mastodon',
  scopes: MASTODON_SCOPES,
  pkce: true,
  rotatingRefresh: false,
  authorizeUrl: (call, state, verifier) => buildAuthorizeUrl(call, state, verifier, mastodonOAuth.scopes),
  async complete(call, code, verifier) {
    const { tokens } = await codeGrant(call, 'basic', code, verifier);
    const answer = await jsonRequest<unknown>({
      method: 'GET',
      url: `${(call.apiBaseUrl ?? '').replace(/\/+$/, '')}/api/v1/accounts/verify_credentials`,
      bearer: tokens.accessToken,
      timeoutMs: call.timeoutMs,
      signal: call.signal,
      userChosenHost: call.userChosenHost ?? false,
    });
    const me = parseAnswer(ZAccount, answer, unusableAnswer('The instance', 'account (verify_credentials)'));
    return [
      {
        externalId: me.id,
        accountName: me.acct ?? me.username ?? me.id,
        credentials: credentialsOf(tokens),
        tokenExpiresAt: tokens.expiresAt,
        permissions: tokens.scopes ?? null,
      },
    ];
  },
  refreshDueAt: () => null,
};
