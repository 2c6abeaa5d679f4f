import { requestedScopes } from '@sps/core';
import { answerField, ZNetworkName } from './answers.js';
import { beforeExpiry, buildAuthorizeUrl, codeGrant, credentialsOf, refreshGrant } from './grants.js';
import { OAuthError, type TOAuthCall, type TOAuthProvider } from './oauth-types.js';
import { jsonRequest } from './token-http.js';

/** Short-lived access tokens are refreshed this long before they expire (a publish in between checks again). */
const SHORT_MARGIN_MS = 10 * 60_000;

function api(call: TOAuthCall, fallback: string): string {
  return (call.apiBaseUrl ?? fallback).replace(/\/+$/, '');
}

/**
 * X: OAuth 2.0 authorization code with PKCE (S256); `offline.access` gives a refresh token, access tokens
 * live two hours and refresh tokens are single-use (each refresh returns a new one).
 * https://docs.x.com/fundamentals/authentication/oauth-2-0/authorization-code
 * The user: GET /2/users/me. https://docs.x.com/x-api/users/user-lookup-me
 */
export const twitterOAuth: TOAuthProvider = {
  platform: 'twitter',
  scopes: requestedScopes('twitter'),
  pkce: true,
  rotatingRefresh: true,
  authorizeUrl: (call, state, verifier) => buildAuthorizeUrl(call, state, verifier, twitterOAuth.scopes),
  async complete(call, code, verifier) {
    const { tokens } = await codeGrant(call, 'basic', code, verifier);
    const me = await jsonRequest<{ data?: { id?: string; username?: string } }>({
      method: 'GET',
      url: `${api(call, 'https://api.x.com')}/2/users/me`,
      bearer: tokens.accessToken,
      timeoutMs: call.timeoutMs,
      signal: call.signal,
    });
    return [
      {
        externalId: answerField(me.data?.id, 'user id'),
        accountName: answerField(me.data?.username, 'username'),
        credentials: credentialsOf(tokens),
        tokenExpiresAt: tokens.expiresAt,
        permissions: tokens.scopes ?? null,
      },
    ];
  },
  // X answers a spent or revoked refresh token with 400 invalid_request, not invalid_grant.
  refresh: (call, credentials) => refreshGrant(call, 'basic', credentials, { invalidRequestIsRefusal: true }),
  refreshDueAt: beforeExpiry(SHORT_MARGIN_MS),
};

/**
 * YouTube through Google's OAuth 2.0 for web servers: `access_type=offline` and `prompt=consent` so a
 * refresh token is issued on every connect; access tokens live an hour; Google keeps the refresh token
 * (it is not sent again on refresh). https://developers.google.com/identity/protocols/oauth2/web-server
 * The channel: GET /youtube/v3/channels?part=snippet&mine=true. https://developers.google.com/youtube/v3/docs/channels/list
 */
export const youtubeOAuth: TOAuthProvider = {
  platform: 'youtube',
  // youtube.force-ssl alone covers every call made (insert, list, delete): network-permissions.ts.
  scopes: requestedScopes('youtube'),
  pkce: true,
  rotatingRefresh: false,
  authorizeUrl: (call, state, verifier) =>
    buildAuthorizeUrl(call, state, verifier, youtubeOAuth.scopes, {
      extra: { access_type: 'offline', prompt: 'consent', include_granted_scopes: 'true' },
    }),
  async complete(call, code, verifier) {
    const { tokens } = await codeGrant(call, 'basic', code, verifier);
    const channels = await jsonRequest<{
      items?: { id?: string; snippet?: { title?: string; customUrl?: string } }[];
    }>({
      method: 'GET',
      url: `${api(call, 'https://www.googleapis.com')}/youtube/v3/channels`,
      searchParams: { part: 'snippet', mine: 'true' },
      bearer: tokens.accessToken,
      timeoutMs: call.timeoutMs,
      signal: call.signal,
    });
    const channel = channels.items?.[0];
    if (!channel) throw new OAuthError('invalid', 'This Google account has no YouTube channel');
    return [
      {
        externalId: answerField(channel.id, 'channel id'),
        accountName: channel.snippet?.customUrl
          ? answerField(channel.snippet.customUrl, 'channel handle')
          : answerField(channel.snippet?.title, 'channel title'),
        credentials: credentialsOf(tokens),
        tokenExpiresAt: tokens.expiresAt,
        permissions: tokens.scopes ?? null,
      },
    ];
  },
  refresh: (call, credentials) => refreshGrant(call, 'basic', credentials),
  refreshDueAt: beforeExpiry(SHORT_MARGIN_MS),
};

/** What organization connects ask for (Community Management API products): network-permissions.ts. */
const LINKEDIN_ORGANIZATION_SCOPES = requestedScopes('linkedin', 'organization');
/** At most this many administered organizations become accounts in one connect. */
const MAX_ORGANIZATIONS = 20;

function linkedinHeaders(call: TOAuthCall): Record<string, string> {
  return {
    'linkedin-version': call.apiVersion ?? '202607',
    'x-restli-protocol-version': '2.0.0',
  };
}

/**
 * The organizations the member administers, and their names. Organization Access Control by Role,
 * `GET /rest/organizationAcls?q=roleAssignee&role=ADMINISTRATOR&state=APPROVED` (needs r_organization_admin
 * or rw_organization_admin), https://learn.microsoft.com/en-us/linkedin/marketing/community-management/organizations/organization-access-control-by-role
 * then each name from the Organization Lookup API (`GET /rest/organizations/{id}`, `localizedName`),
 * https://learn.microsoft.com/en-us/linkedin/marketing/community-management/organizations/organization-lookup-api
 */
async function administeredOrganizations(
  call: TOAuthCall,
  accessToken: string,
  wanted: string | null,
): Promise<{ id: string; name: string }[]> {
  const base = api(call, 'https://api.linkedin.com');
  const acls = await jsonRequest<{ elements?: { organization?: string; role?: string; state?: string }[] }>({
    method: 'GET',
    url: `${base}/rest/organizationAcls`,
    searchParams: { q: 'roleAssignee', role: 'ADMINISTRATOR', state: 'APPROVED', count: '100' },
    headers: linkedinHeaders(call),
    bearer: accessToken,
    timeoutMs: call.timeoutMs,
    signal: call.signal,
  });
  const ids = [
    ...new Set(
      (acls.elements ?? [])
        .filter((e) => e.role === 'ADMINISTRATOR' && e.state === 'APPROVED')
        .map((e) => /^urn:li:organization:(\d{1,20})$/.exec(e.organization ?? '')?.[1])
        .filter((id): id is string => id !== undefined),
    ),
  ];
  const chosen = wanted ? ids.filter((id) => id === wanted) : ids.slice(0, MAX_ORGANIZATIONS);
  if (chosen.length === 0) {
    throw new OAuthError(
      'invalid',
      wanted
        ? `The LinkedIn member is not an administrator of organization ${wanted}`
        : 'The LinkedIn member administers no organization page',
      'no_organization',
    );
  }
  const named: { id: string; name: string }[] = [];
  for (const id of chosen) {
    const org = await jsonRequest<{ localizedName?: string; vanityName?: string }>({
      method: 'GET',
      url: `${base}/rest/organizations/${id}`,
      headers: linkedinHeaders(call),
      bearer: accessToken,
      timeoutMs: call.timeoutMs,
      signal: call.signal,
    });
    const name = [org.localizedName, org.vanityName].find((n) => ZNetworkName.safeParse(n).success);
    named.push({ id, name: typeof name === 'string' ? name.trim() : `organization ${id}` });
  }
  return named;
}

/**
 * LinkedIn: 3-legged authorization code, client credentials in the form body, access tokens for 60 days;
 * refresh tokens only for apps LinkedIn enabled for programmatic refresh (used when sent).
 * https://learn.microsoft.com/en-us/linkedin/shared/authentication/authorization-code-flow
 * https://learn.microsoft.com/en-us/linkedin/shared/authentication/programmatic-refresh-tokens
 * No PKCE: LinkedIn offers it only to native apps with a loopback redirect, enabled by LinkedIn on request
 * (https://learn.microsoft.com/en-us/linkedin/shared/authentication/authorization-code-flow-native); the web
 * flow authenticates the code exchange with the client secret.
 * The member: OpenID Connect userinfo (`sub`), posting as `urn:li:person:{sub}`.
 * https://learn.microsoft.com/en-us/linkedin/consumer/integrations/self-serve/sign-in-with-linkedin-v2
 * Organization pages (selection `organization[:<id>]`): the organization scopes are asked for too, and
 * each administered organization becomes an account posting as `urn:li:organization:{id}`
 * (w_organization_social; r_organization_social lets a lost answer be read back).
 * https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/posts-api
 */
export const linkedinOAuth: TOAuthProvider = {
  platform: 'linkedin',
  scopes: requestedScopes('linkedin', 'member'),
  pkce: false,
  rotatingRefresh: false,
  authorizeUrl: (call, state, _verifier, selection) =>
    buildAuthorizeUrl(
      call,
      state,
      null,
      selection?.startsWith('organization') ? LINKEDIN_ORGANIZATION_SCOPES : linkedinOAuth.scopes,
    ),
  async complete(call, code, _verifier, selection) {
    const { tokens } = await codeGrant(call, 'post', code, null);
    if (selection?.startsWith('organization')) {
      const wanted = selection.startsWith('organization:') ? selection.slice('organization:'.length) : null;
      const organizations = await administeredOrganizations(call, tokens.accessToken, wanted);
      return organizations.map((org) => ({
        externalId: `urn:li:organization:${org.id}`,
        accountName: org.name,
        credentials: credentialsOf(tokens),
        tokenExpiresAt: tokens.expiresAt,
        permissions: tokens.scopes ?? null,
      }));
    }
    const me = await jsonRequest<{ sub?: string; name?: string }>({
      method: 'GET',
      url: `${api(call, 'https://api.linkedin.com')}/v2/userinfo`,
      bearer: tokens.accessToken,
      timeoutMs: call.timeoutMs,
      signal: call.signal,
    });
    return [
      {
        externalId: `urn:li:person:${answerField(me.sub, 'member id')}`,
        accountName: answerField(me.name, 'name'),
        credentials: credentialsOf(tokens),
        tokenExpiresAt: tokens.expiresAt,
        permissions: tokens.scopes ?? null,
      },
    ];
  },
  refresh: (call, credentials) => refreshGrant(call, 'post', credentials),
  // 60-day tokens: refreshed a week ahead where a refresh token exists; otherwise the owner reconnects.
  refreshDueAt: beforeExpiry(7 * 86_400_000),
};

/**
 * TikTok Login Kit (web): `client_key` instead of `client_id`, comma-separated scopes; access tokens
 * live 24 hours (2 hours in the newer page), refresh tokens rotate (the previous one stops working).
 * https://developers.tiktok.com/doc/login-kit-web
 * https://developers.tiktok.com/docs/en/oauth-refresh-a-user-access-token
 * The user: GET /v2/user/info/ with the fields user.info.basic allows (open_id, display_name); `username`
 * needs user.info.profile, which the service does not ask, and TikTok answers 401 scope_not_authorized for
 * a field whose scope was not granted. https://developers.tiktok.com/doc/tiktok-api-v2-get-user-info
 * https://developers.tiktok.com/bulletin/user-info-scope-migration
 * PKCE (S256): the token endpoint takes `code_verifier` ("Code verifier is used to generate code challenge in
 * PKCE authorization flow"; required for mobile and desktop, accepted for web), so a code that leaks on the way
 * back cannot be exchanged without the verifier sealed in the state.
 * https://developers.tiktok.com/doc/oauth-user-access-token-management
 */
export const tiktokOAuth: TOAuthProvider = {
  platform: 'tiktok',
  scopes: requestedScopes('tiktok'),
  pkce: true,
  rotatingRefresh: true,
  authorizeUrl: (call, state, verifier) =>
    buildAuthorizeUrl(call, state, verifier, tiktokOAuth.scopes, {
      scopeSeparator: ',',
      clientIdParam: 'client_key',
    }),
  async complete(call, code, verifier) {
    const { tokens, body } = await codeGrant(call, 'tiktok', code, verifier);
    const info = await jsonRequest<{
      data?: { user?: { open_id?: string; display_name?: string } };
    }>({
      method: 'GET',
      url: `${api(call, 'https://open.tiktokapis.com')}/v2/user/info/`,
      searchParams: { fields: 'open_id,display_name' },
      bearer: tokens.accessToken,
      timeoutMs: call.timeoutMs,
      signal: call.signal,
    });
    const user = info.data?.user;
    return [
      {
        externalId: answerField(user?.open_id ?? body.open_id, 'open_id'),
        accountName: answerField(user?.display_name, 'display name'),
        credentials: credentialsOf(tokens),
        tokenExpiresAt: tokens.expiresAt,
        permissions: tokens.scopes ?? null,
      },
    ];
  },
  refresh: (call, credentials) => refreshGrant(call, 'tiktok', credentials),
  refreshDueAt: beforeExpiry(SHORT_MARGIN_MS),
};
