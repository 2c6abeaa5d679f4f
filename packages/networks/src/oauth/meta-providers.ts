import { parseScopes, requestedScopes } from '@sps/core';
import { answerField } from './answers.js';
import { buildAuthorizeUrl, codeGrant, credentialsOf, fromTokenBody } from './grants.js';
import { OAuthError, type TOAuthCall, type TOAuthProvider, type TTokenSet } from './oauth-types.js';
import { jsonRequest } from './token-http.js';

const DAY_MS = 86_400_000;

function base(call: TOAuthCall, fallback: string): string {
  return (call.apiBaseUrl ?? fallback).replace(/\/+$/, '');
}

/**
 * Threads' and Instagram's exchange of a short-lived token for a 60-day one (`th_exchange_token`,
 * `ig_exchange_token` at `{graph}/access_token`).
 */
async function exchangeForLongLived(
  call: TOAuthCall,
  graph: string,
  grantType: string,
  shortToken: string,
): Promise<TTokenSet> {
  return fromTokenBody(
    await jsonRequest({
      method: 'GET',
      url: `${graph}/access_token`,
      searchParams: { grant_type: grantType, client_secret: call.app.clientSecret, access_token: shortToken },
      timeoutMs: call.timeoutMs,
      signal: call.signal,
    }),
  );
}

/** Threads' and Instagram's refresh of a long-lived token (`th_refresh_token`, `ig_refresh_token`). */
async function refreshLongLived(
  call: TOAuthCall,
  fallbackBase: string,
  grantType: string,
  token: string,
): Promise<TTokenSet> {
  return fromTokenBody(
    await jsonRequest({
      method: 'GET',
      url: `${base(call, fallbackBase)}/refresh_access_token`,
      searchParams: { grant_type: grantType, access_token: token },
      timeoutMs: call.timeoutMs,
      signal: call.signal,
    }),
  );
}

/** GET `{graph}/{version}/me` with the long-lived token. */
function readMe<T>(call: TOAuthCall, graph: string, defaultVersion: string, fields: string, token: string) {
  return jsonRequest<T>({
    method: 'GET',
    url: `${graph}/${call.apiVersion ?? defaultVersion}/me`,
    searchParams: { fields },
    bearer: token,
    timeoutMs: call.timeoutMs,
    signal: call.signal,
  });
}

/**
 * Meta's long-lived tokens (60 days) are refreshed with their own grant, only once a day old and before
 * they expire; refreshing every few days keeps them alive indefinitely. Due: a day after issue, or ten
 * days before expiry, whichever is later.
 */
function metaRefreshDueAt(expiresAt: Date | null, issuedAt: Date | null): Date | null {
  if (!expiresAt) return null;
  const dayOld = (issuedAt?.getTime() ?? Date.now()) + DAY_MS;
  return new Date(Math.max(dayOld, expiresAt.getTime() - 10 * DAY_MS));
}

/**
 * Threads: authorization code (short-lived token, one hour), then `th_exchange_token` for a 60-day token,
 * refreshed with `th_refresh_token` once at least 24 hours old.
 * https://developers.facebook.com/docs/threads/get-started/get-access-tokens-and-permissions
 * https://developers.facebook.com/docs/threads/get-started/long-lived-tokens/
 */
export const threadsOAuth: TOAuthProvider = {
  platform: 'threads',
  scopes: requestedScopes('threads'),
  pkce: false,
  rotatingRefresh: false,
  authorizeUrl: (call, state) =>
    buildAuthorizeUrl(call, state, null, threadsOAuth.scopes, { scopeSeparator: ',' }),
  async complete(call, code) {
    const { tokens: short } = await codeGrant(call, 'post', code, null);
    const graph = base(call, 'https://graph.threads.net');
    const long = await exchangeForLongLived(call, graph, 'th_exchange_token', short.accessToken);
    const me = await readMe<{ id?: string; username?: string }>(
      call,
      graph,
      'v1.0',
      'id,username',
      long.accessToken,
    );
    return [
      {
        externalId: answerField(me.id, 'user id'),
        accountName: answerField(me.username, 'username'),
        credentials: credentialsOf(long),
        tokenExpiresAt: long.expiresAt,
        permissions: short.scopes ?? long.scopes ?? null,
      },
    ];
  },
  refresh: (call, credentials) =>
    refreshLongLived(call, 'https://graph.threads.net', 'th_refresh_token', credentials.token),
  refreshDueAt: metaRefreshDueAt,
};

/**
 * Instagram API with Instagram Login: authorization code at api.instagram.com (short-lived token), then
 * `ig_exchange_token` at graph.instagram.com for a 60-day token, refreshed with `ig_refresh_token`.
 * https://developers.facebook.com/docs/instagram-platform/instagram-api-with-instagram-login/business-login
 * https://developers.facebook.com/documentation/instagram-platform/reference/access_token
 * https://developers.facebook.com/documentation/instagram-platform/reference/refresh_access_token
 */
export const instagramOAuth: TOAuthProvider = {
  platform: 'instagram',
  scopes: requestedScopes('instagram'),
  pkce: false,
  rotatingRefresh: false,
  authorizeUrl: (call, state) =>
    buildAuthorizeUrl(call, state, null, instagramOAuth.scopes, { scopeSeparator: ',' }),
  async complete(call, code) {
    // The answer is `{data: [{access_token, user_id, permissions}]}` (older: the object itself).
    const { body } = await codeGrant(call, 'post', code, null);
    const first = Array.isArray(body.data) ? (body.data[0] as Record<string, unknown>) : body;
    const short = fromTokenBody(first);
    const graph = base(call, 'https://graph.instagram.com');
    const long = await exchangeForLongLived(call, graph, 'ig_exchange_token', short.accessToken);
    const me = await readMe<{ user_id?: string | number; id?: string; username?: string }>(
      call,
      graph,
      'v25.0',
      'user_id,username',
      long.accessToken,
    );
    return [
      {
        externalId: answerField(me.user_id ?? me.id ?? first.user_id, 'user id'),
        accountName: answerField(me.username, 'username'),
        credentials: credentialsOf(long),
        tokenExpiresAt: long.expiresAt,
        permissions: short.scopes ?? long.scopes ?? null,
      },
    ];
  },
  refresh: (call, credentials) =>
    refreshLongLived(call, 'https://graph.instagram.com', 'ig_refresh_token', credentials.token),
  refreshDueAt: metaRefreshDueAt,
};

/**
 * Facebook Login for a Page: code → user token (GET /oauth/access_token), `fb_exchange_token` for a
 * long-lived user token, then the Pages the person granted (GET /me/accounts) with their Page tokens,
 * which do not expire when obtained from a long-lived user token. Each chosen Page is one account; the
 * long-lived user token (60 days) is kept with it for video uploads (facebook-video.ts).
 * https://developers.facebook.com/docs/facebook-login/guides/advanced/manual-flow
 * https://developers.facebook.com/docs/facebook-login/guides/access-tokens/get-long-lived
 * https://developers.facebook.com/docs/pages-api/getting-started
 */
export const facebookOAuth: TOAuthProvider = {
  platform: 'facebook',
  scopes: requestedScopes('facebook'),
  pkce: false,
  rotatingRefresh: false,
  authorizeUrl: (call, state) =>
    buildAuthorizeUrl(call, state, null, facebookOAuth.scopes, { scopeSeparator: ',' }),
  async complete(call, code, _verifier, selection) {
    const user = fromTokenBody(
      await jsonRequest({
        method: 'GET',
        url: call.app.tokenUrl,
        searchParams: {
          client_id: call.app.clientId,
          client_secret: call.app.clientSecret,
          redirect_uri: call.redirectUri,
          code,
        },
        timeoutMs: call.timeoutMs,
        signal: call.signal,
      }),
    );
    const long = fromTokenBody(
      await jsonRequest({
        method: 'GET',
        url: call.app.tokenUrl,
        searchParams: {
          grant_type: 'fb_exchange_token',
          client_id: call.app.clientId,
          client_secret: call.app.clientSecret,
          fb_exchange_token: user.accessToken,
        },
        timeoutMs: call.timeoutMs,
        signal: call.signal,
      }),
    );
    const graph = `${base(call, 'https://graph.facebook.com')}/${call.apiVersion ?? 'v25.0'}`;
    const pages = await jsonRequest<{ data?: { id?: string; name?: string; access_token?: string }[] }>({
      method: 'GET',
      url: `${graph}/me/accounts`,
      searchParams: { fields: 'id,name,access_token', limit: '100' },
      bearer: long.accessToken,
      timeoutMs: call.timeoutMs,
      signal: call.signal,
    });
    // What the person granted (they may untick permissions in the dialog): GET /me/permissions.
    // https://developers.facebook.com/docs/graph-api/reference/user/permissions/
    const permissions = await jsonRequest<{ data?: { permission?: unknown; status?: unknown }[] }>({
      method: 'GET',
      url: `${graph}/me/permissions`,
      searchParams: { limit: '100' },
      bearer: long.accessToken,
      timeoutMs: call.timeoutMs,
      signal: call.signal,
    });
    const scopes = parseScopes(
      (permissions.data ?? []).filter((p) => p.status === 'granted').map((p) => p.permission),
    );
    const granted = (pages.data ?? []).filter((p) => p.id && p.access_token);
    const chosen = selection ? granted.filter((p) => p.id === selection) : granted;
    if (chosen.length === 0)
      throw new OAuthError(
        'invalid',
        selection ? `Page ${selection} was not among the Pages granted` : 'No Facebook Page was granted',
        'no_page',
      );
    return chosen.map((page) => ({
      externalId: answerField(page.id, 'page id'),
      accountName: answerField(page.name, 'page name'),
      // The long-lived user token is kept sealed next to the Page token: Meta's Resumable Upload API,
      // which Page videos are uploaded with, takes a user token (https://developers.facebook.com/docs/graph-api/guides/upload).
      credentials: {
        token: answerField(page.access_token, 'page token'),
        extra: {
          userToken: long.accessToken,
          // About 60 days; Meta has no grant that renews it without the person: a reconnect does.
          ...(long.expiresAt ? { userTokenExpiresAt: long.expiresAt.toISOString() } : {}),
        },
      },
      tokenExpiresAt: null,
      permissions: scopes,
    }));
  },
  refreshDueAt: () => null,
};
