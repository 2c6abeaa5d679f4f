import type { TSocialCredentials } from '@sps/core';
import {
  ArcticFetchError,
  CodeChallengeMethod,
  generateCodeVerifier,
  generateState,
  OAuth2Client,
  OAuth2RequestError,
  type OAuth2Tokens,
  UnexpectedErrorResponseBodyError,
  UnexpectedResponseError,
} from 'arctic';
import { expiresIn, OAuthError, type TOAuthCall, type TTokenSet } from './oauth-types.js';
import { classifyTokenError, jsonRequest, withTimeout } from './token-http.js';

/**
 * How a network takes the code and refresh grants:
 * - `basic`: RFC 6749 with HTTP Basic client authentication (X, Google, Mastodon), through arctic's
 *   OAuth2Client (a small, maintained client that builds the PKCE challenge and parses RFC error bodies);
 * - `post`: client_id and client_secret in the form body (LinkedIn, Meta), which arctic's generic client
 *   does not send, so a plain bounded got request;
 * - `tiktok`: `client_key` instead of `client_id` (https://developers.tiktok.com/doc/oauth-user-access-token-management).
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

function fromArcticError(error: unknown, invalidRequestIsRefusal: boolean): OAuthError {
  if (error instanceof OAuthError) return error;
  if (error instanceof OAuth2RequestError) {
    // arctic drops the status of 400/401 answers; RFC 6749 sends invalid_client with a 401.
    const status = error.code === 'invalid_client' ? 401 : 400;
    return classifyTokenError(
      status,
      { error: error.code, error_description: error.description ?? undefined },
      {
        invalidRequestIsRefusal,
      },
    );
  }
  if (error instanceof UnexpectedErrorResponseBodyError) return classifyTokenError(error.status, error.data);
  if (error instanceof UnexpectedResponseError) return classifyTokenError(error.status, null);
  if (error instanceof ArcticFetchError)
    return new OAuthError('transient', 'The token endpoint could not be reached');
  return new OAuthError('transient', `Token request failed (${(error as Error).message})`);
}

function fromArcticTokens(tokens: OAuth2Tokens): TTokenSet {
  const data = tokens.data as Record<string, unknown>;
  if (typeof data.access_token !== 'string' || !data.access_token)
    throw new OAuthError('invalid', 'The token endpoint answered without an access token');
  return {
    accessToken: data.access_token,
    refreshToken: typeof data.refresh_token === 'string' ? data.refresh_token : undefined,
    expiresAt: expiresIn(data.expires_in),
    refreshExpiresAt: expiresIn(data.refresh_token_expires_in ?? data.refresh_expires_in),
  };
}

export function fromTokenBody(data: Record<string, unknown>): TTokenSet {
  if (typeof data.access_token !== 'string' || !data.access_token)
    throw new OAuthError('invalid', 'The token endpoint answered without an access token');
  return {
    accessToken: data.access_token,
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
  if (style === 'basic') {
    try {
      const tokens = await withTimeout(
        clientOf(call).validateAuthorizationCode(call.app.tokenUrl, code, codeVerifier),
        call.timeoutMs,
      );
      return { tokens: fromArcticTokens(tokens), body: tokens.data as Record<string, unknown> };
    } catch (error) {
      throw fromArcticError(error, false);
    }
  }
  const form: Record<string, string> = {
    [style === 'tiktok' ? 'client_key' : 'client_id']: call.app.clientId,
    client_secret: call.app.clientSecret,
    grant_type: 'authorization_code',
    code,
    redirect_uri: call.redirectUri,
    ...(codeVerifier ? { code_verifier: codeVerifier } : {}),
  };
  const body = await jsonRequest({ method: 'POST', url: call.app.tokenUrl, form, timeoutMs: call.timeoutMs });
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
  let tokens: TTokenSet;
  if (style === 'basic') {
    try {
      tokens = fromArcticTokens(
        await withTimeout(
          clientOf(call).refreshAccessToken(call.app.tokenUrl, refreshToken, []),
          call.timeoutMs,
        ),
      );
    } catch (error) {
      throw fromArcticError(error, options.invalidRequestIsRefusal ?? false);
    }
  } else {
    const body = await jsonRequest({
      method: 'POST',
      url: call.app.tokenUrl,
      timeoutMs: call.timeoutMs,
      invalidRequestIsRefusal: options.invalidRequestIsRefusal ?? false,
      form: {
        [style === 'tiktok' ? 'client_key' : 'client_id']: call.app.clientId,
        client_secret: call.app.clientSecret,
        grant_type: 'refresh_token',
        refresh_token: refreshToken,
      },
    });
    tokens = fromTokenBody(body);
  }
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
