import type { TSocialCredentials } from '@sps/core';
import { parseScopes } from '@sps/core';
import { CodeChallengeMethod, generateCodeVerifier, generateState, OAuth2Client } from 'arctic';
import { expiresIn, OAuthError, type TOAuthCall, type TTokenSet } from './oauth-types.js';
import { jsonRequest } from './token-http.js';

/**
 * How a network takes the code and refresh grants:
 * - `basic`: RFC 6749 with HTTP Basic client authentication (X, Google, Mastodon; the id and secret
 *   form-encoded first, https://datatracker.ietf.org/doc/html/rfc6749#section-2.3.1; X's page shows them
 *   joined as they are, https://docs.x.com/fundamentals/authentication/oauth-2-0/user-access-token, which is
 *   the same bytes for its ids and secrets of letters, digits, `-` and `_`);
 * - `post`: client_id and client_secret in the form body (LinkedIn, Meta);
 * - `tiktok`: `client_key` instead of `client_id` (https://developers.tiktok.com/doc/oauth-user-access-token-management).
 * Every style is one bounded got request (`jsonRequest`): arctic's token calls use fetch, which follows
 * redirects, reads answers of any size and cannot be aborted by its caller, and a Mastodon token endpoint is
 * on a server an API user chose. arctic still builds the authorization URL (state, PKCE S256 challenge).
 */
export type TGrantStyle = 'basic' | 'post' | 'tiktok';

/** A fresh `state` (and PKCE verifier where the network uses PKCE), from arctic's CSPRNG helpers. */
export function newAuthorizationSecrets(pkce: boolean): { state: string; verifier: string | null } {
  return { state: generateState(), verifier: pkce ? generateCodeVerifier() : null };
}

function clientOf(call: TOAuthCall): OAuth2Client {
  return new OAuth2Client(call.app.clientId, call.app.clientSecret, call.redirectUri);
}

/** Builds the authorization URL with arctic (state, PKCE S256 challenge, scopes), then the network's extras. */
export function buildAuthorizeUrl(
  call: TOAuthCall,
  state: string,
  codeVerifier: string | null,
  scopes: readonly string[],
  options: { scopeSeparator?: string; clientIdParam?: string; extra?: Record<string, string> } = {},
): string {
  const client = clientOf(call);
  const url = codeVerifier
    ? client.createAuthorizationURLWithPKCE(
        call.app.authorizeUrl,
        state,
        CodeChallengeMethod.S256,
        codeVerifier,
        [...scopes],
      )
    : client.createAuthorizationURL(call.app.authorizeUrl, state, [...scopes]);
  if (options.scopeSeparator) url.searchParams.set('scope', scopes.join(options.scopeSeparator));
  if (options.clientIdParam) {
    url.searchParams.delete('client_id');
    url.searchParams.set(options.clientIdParam, call.app.clientId);
  }
  for (const [k, v] of Object.entries(options.extra ?? {})) url.searchParams.set(k, v);
  return url.toString();
}

/** The token endpoint request of a call: its bounds, its abort signal, the address guard for chosen hosts. */
function requestOf(call: TOAuthCall, style: TGrantStyle) {
  return {
    method: 'POST' as const,
    url: call.app.tokenUrl,
    timeoutMs: call.timeoutMs,
    signal: call.signal,
    userChosenHost: call.userChosenHost ?? false,
    ...(style === 'basic' ? { basic: { username: call.app.clientId, password: call.app.clientSecret } } : {}),
  };
}

/** Client authentication in the form body, for the networks that take it there. */
function clientForm(call: TOAuthCall, style: TGrantStyle): Record<string, string> {
  if (style === 'basic') return {};
  return {
    [style === 'tiktok' ? 'client_key' : 'client_id']: call.app.clientId,
    client_secret: call.app.clientSecret,
  };
}

export function fromTokenBody(data: Record<string, unknown>): TTokenSet {
  if (typeof data.access_token !== 'string' || !data.access_token)
    throw new OAuthError('invalid', 'The token endpoint answered without an access token');
  // `scope` (RFC 6749 §5.1; X, Google, LinkedIn, TikTok, Mastodon), `permissions` (Instagram's code answer).
  const scopes = parseScopes(data.scope ?? data.permissions);
  return {
    accessToken: data.access_token,
    ...(scopes ? { scopes } : {}),
    refreshToken: typeof data.refresh_token === 'string' ? data.refresh_token : undefined,
    expiresAt: expiresIn(data.expires_in),
    refreshExpiresAt: expiresIn(data.refresh_token_expires_in ?? data.refresh_expires_in),
  };
}

/** The authorization-code grant in the network's style. */
export async function codeGrant(
  call: TOAuthCall,
  style: TGrantStyle,
  code: string,
  codeVerifier: string | null,
): Promise<{ tokens: TTokenSet; body: Record<string, unknown> }> {
  const body = await jsonRequest({
    ...requestOf(call, style),
    form: {
      ...clientForm(call, style),
      grant_type: 'authorization_code',
      code,
      redirect_uri: call.redirectUri,
      ...(codeVerifier ? { code_verifier: codeVerifier } : {}),
    },
  });
  return { tokens: fromTokenBody(body), body };
}

/** The refresh-token grant; a network that sends no new refresh token keeps the stored one. */
export async function refreshGrant(
  call: TOAuthCall,
  style: TGrantStyle,
  credentials: TSocialCredentials,
  options: { invalidRequestIsRefusal?: boolean } = {},
): Promise<TTokenSet> {
  const refreshToken = credentials.refreshToken;
  if (!refreshToken) throw new OAuthError('refused', 'No refresh token is stored for this account');
  const body = await jsonRequest({
    ...requestOf(call, style),
    invalidRequestIsRefusal: options.invalidRequestIsRefusal ?? false,
    form: { ...clientForm(call, style), grant_type: 'refresh_token', refresh_token: refreshToken },
  });
  const tokens = fromTokenBody(body);
  return { ...tokens, refreshToken: tokens.refreshToken ?? refreshToken };
}

/** Credentials to store from a token set (the refresh token kept when the network sent none). */
export function credentialsOf(tokens: TTokenSet, previous?: TSocialCredentials): TSocialCredentials {
  const refreshToken = tokens.refreshToken ?? previous?.refreshToken;
  const refreshExpiresAt = tokens.refreshExpiresAt?.toISOString() ?? previous?.refreshExpiresAt;
  return {
    token: tokens.accessToken,
    ...(refreshToken ? { refreshToken } : {}),
    ...(refreshExpiresAt ? { refreshExpiresAt } : {}),
    ...(previous?.extra ? { extra: previous.extra } : {}),
  };
}

/**
 * Refresh shortly before expiry (networks with short-lived tokens); never earlier than half the token's
 * life, so a very short lifetime cannot make a refresh loop.
 */
export function beforeExpiry(marginMs: number) {
  return (expiresAt: Date | null, issuedAt: Date | null, credentials: TSocialCredentials): Date | null => {
    if (!expiresAt || !credentials.refreshToken) return null;
    const life = issuedAt ? Math.max(0, expiresAt.getTime() - issuedAt.getTime()) : Number.POSITIVE_INFINITY;
    return new Date(expiresAt.getTime() - Math.min(marginMs, life / 2));
  };
}
