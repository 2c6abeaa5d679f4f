import type { TPlatform } from '@sps/core';
import express, { type Express, type Response, type Router } from 'express';
import { blueskyAuthOf, registerBlueskyAuthControls } from '../bluesky-auth.sim.js';
import { graphError } from '../graph-sim.js';
import { registerLinkedInOrganizationControls } from '../linkedin-orgs.sim.js';
import type { SimState } from '../sim-state.js';
import { registerAuthServer, type TAuthServerConfig } from './auth-server.js';
import { registerIdentitySims } from './identity.sim.js';
import { registerMetaExchanges } from './meta-exchange.sim.js';
import { DEFAULT_LIFETIMES, oauthStoreOf } from './oauth-store.js';

/** RFC 6749 §5.2 error bodies (`{error, error_description}`), with the status the network uses. */
function rfcRefusal(clientStatus = 401) {
  return (res: Response, kind: string, description: string) => {
    res
      .status(kind === 'invalid_client' ? clientStatus : 400)
      .json({ error: kind, error_description: description });
  };
}

/**
 * What Meta's authorization servers (Threads, Instagram, Facebook) share: id and secret in the form, no
 * PKCE, comma-separated scopes, and a one-hour token from the code with no refresh grant (the 60-day token
 * comes from their own exchange, meta-exchange.sim.ts).
 */
const META_CODE_GRANT = {
  clientIdParam: 'client_id',
  clientAuth: 'body',
  pkce: 'none',
  refresh: 'none',
  scopeSeparator: ',',
  codeGrantAccessSeconds: 3600,
} as const satisfies Partial<TAuthServerConfig>;

/** Graph API error bodies: code 1 for a bad client, 100 (invalid parameter) otherwise. */
const graphRefusal: TAuthServerConfig['refuse'] = (res, kind, description) =>
  graphError(res, 400, kind === 'invalid_client' ? 1 : 100, description);

/**
 * Each network's authorization server, with its real paths (relative to the network's simulated host),
 * client authentication, PKCE rule and refresh-token behaviour.
 */
const SERVERS: TAuthServerConfig[] = [
  {
    // https://docs.x.com/fundamentals/authentication/oauth-2-0/authorization-code: PKCE required, codes valid
    // 30 seconds, confidential clients use Basic auth, refresh tokens single-use. X answers any bad code or
    // spent refresh token with 400 invalid_request "Value passed for the token was invalid."
    platform: 'twitter',
    authorizePath: '/i/oauth2/authorize',
    tokenPath: '/2/oauth2/token',
    clientIdParam: 'client_id',
    clientAuth: 'basic',
    pkce: 'required',
    refresh: 'rotating',
    codeTtlSeconds: 30,
    scopeSeparator: ' ',
    refuse(res, kind) {
      if (kind === 'invalid_client') {
        res
          .status(401)
          .json({ error: 'unauthorized_client', error_description: 'Missing valid authorization header' });
        return;
      }
      res
        .status(400)
        .json({ error: 'invalid_request', error_description: 'Value passed for the token was invalid.' });
    },
  },
  {
    // https://developers.google.com/identity/protocols/oauth2/web-server: Basic or body client auth, optional
    // PKCE, refresh tokens reusable and not repeated in the refresh answer; invalid_grant for bad ones.
    platform: 'youtube',
    authorizePath: '/o/oauth2/v2/auth',
    tokenPath: '/token',
    clientIdParam: 'client_id',
    clientAuth: 'either',
    pkce: 'optional',
    refresh: 'reusable',
    codeTtlSeconds: 600,
    scopeSeparator: ' ',
    refuse(res, kind, description) {
      if (kind === 'invalid_client') {
        res.status(401).json({ error: 'invalid_client', error_description: 'Unauthorized' });
        return;
      }
      res.status(400).json({
        error: kind,
        error_description: kind === 'invalid_grant' ? 'Token has been expired or revoked.' : description,
      });
    },
  },
  {
    // https://learn.microsoft.com/en-us/linkedin/shared/authentication/authorization-code-flow: id and secret
    // in the body, codes valid 30 minutes, refresh tokens (programmatic refresh) reusable for a year.
    platform: 'linkedin',
    authorizePath: '/oauth/v2/authorization',
    tokenPath: '/oauth/v2/accessToken',
    clientIdParam: 'client_id',
    clientAuth: 'body',
    pkce: 'none',
    refresh: 'reusable',
    codeTtlSeconds: 1800,
    scopeSeparator: ' ',
    refuse: rfcRefusal(401),
  },
  {
    // https://developers.tiktok.com/doc/oauth-user-access-token-management: `client_key`, body auth,
    // rotating refresh tokens (the previous one stops working); PKCE optional on the web (`code_verifier`
    // "required for mobile and desktop app only"), checked when the authorization carried a challenge.
    platform: 'tiktok',
    authorizePath: '/v2/auth/authorize/',
    tokenPath: '/v2/oauth/token/',
    clientIdParam: 'client_key',
    clientAuth: 'body',
    pkce: 'optional',
    refresh: 'rotating',
    codeTtlSeconds: 600,
    scopeSeparator: ',',
    refuse(res, kind, description) {
      // A verifier that does not match: TikTok's own words, as integrators report them.
      if (description.startsWith('code_verifier')) {
        res.status(400).json({
          error: 'invalid_request',
          error_description: 'Code verifier or code challenge is invalid.',
          log_id: 'SIMLOG0001',
        });
        return;
      }
      res
        .status(kind === 'invalid_client' ? 401 : 400)
        .json({ error: kind, error_description: description, log_id: 'SIMLOG0001' });
    },
    extra: (user) => ({ open_id: `sim-open-${user}` }),
  },
  {
    // https://developers.facebook.com/docs/threads/get-started/get-access-tokens-and-permissions: the code
    // gives a one-hour token and the user id; the long-lived exchange is a separate call.
    platform: 'threads',
    authorizePath: '/oauth/authorize',
    tokenPath: '/oauth/access_token',
    ...META_CODE_GRANT,
    // The answer is `{access_token, user_id}`: it does not say which permissions were granted.
    grantField: 'none',
    codeTtlSeconds: 600,
    refuse: graphRefusal,
  },
  {
    // https://developers.facebook.com/docs/instagram-platform/instagram-api-with-instagram-login/business-login
    platform: 'instagram',
    authorizePath: '/oauth/authorize',
    tokenPath: '/oauth/access_token',
    ...META_CODE_GRANT,
    // `{access_token, user_id, permissions}` (comma-separated).
    grantField: 'permissions',
    codeTtlSeconds: 3600,
    refuse(res, _kind, description) {
      res.status(400).json({ error_type: 'OAuthException', code: 400, error_message: description });
    },
  },
  {
    // https://developers.facebook.com/docs/facebook-login/guides/advanced/manual-flow: the dialog at
    // www.facebook.com/vNN.0/dialog/oauth, the code exchanged with GET /vNN.0/oauth/access_token.
    platform: 'facebook',
    authorizePath: '/v25.0/dialog/oauth',
    tokenPath: '/v25.0/oauth/access_token',
    tokenMethod: 'GET',
    ...META_CODE_GRANT,
    // `{access_token, token_type, expires_in}`; the grant is read with GET /me/permissions.
    grantField: 'none',
    codeTtlSeconds: 600,
    refuse: graphRefusal,
  },
  {
    // https://docs.joinmastodon.org/methods/oauth/: apps registered per instance, redirect URIs must match
    // the registration, Basic or body client auth, PKCE S256 optional; tokens do not expire.
    platform: 'mastodon',
    authorizePath: '/oauth/authorize',
    tokenPath: '/oauth/token',
    clientIdParam: 'client_id',
    clientAuth: 'either',
    pkce: 'optional',
    refresh: 'none',
    codeTtlSeconds: 600,
    scopeSeparator: ' ',
    registeredRedirects: true,
    refuse(res, kind, description) {
      res.status(kind === 'invalid_client' ? 401 : 400).json({
        error: kind,
        error_description:
          kind === 'invalid_grant'
            ? 'The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client.'
            : description,
      });
    },
  },
];

/**
 * Mounts every network's authorization server (before the network's own routes, on the same prefix) and
 * the `/__sim/oauth/*` controls: lifetimes per network, the simulated clock, strict token checks.
 */
export function registerOAuthSims(app: Express, sim: SimState): void {
  const store = oauthStoreOf(sim);
  const routers = new Map<TPlatform, Router>();
  const routerOf = (platform: TPlatform) => {
    let router = routers.get(platform);
    if (!router) {
      router = express.Router();
      routers.set(platform, router);
    }
    return router;
  };
  // Meta's other grants first: they share Facebook's token path with the code exchange.
  registerMetaExchanges(routerOf, sim);
  for (const cfg of SERVERS) registerAuthServer(routerOf(cfg.platform), sim, cfg);
  registerIdentitySims(routerOf, sim);
  for (const [platform, router] of routers) app.use(`/${platform}`, router);
  registerBlueskyAuthControls(app, sim);
  registerLinkedInOrganizationControls(app, sim);

  app.post('/__sim/oauth/lifetimes', (req, res) => {
    const body = req.body as {
      platform?: TPlatform;
      access_seconds?: number | null;
      refresh_seconds?: number | null;
    };
    if (!body.platform || !DEFAULT_LIFETIMES[body.platform]) {
      res.status(400).json({ error: 'a platform with an authorization server is required' });
      return;
    }
    const current = store.lifetimesOf(body.platform);
    store.lifetimes.set(body.platform, {
      accessSeconds: body.access_seconds === undefined ? current.accessSeconds : body.access_seconds,
      refreshSeconds: body.refresh_seconds === undefined ? current.refreshSeconds : body.refresh_seconds,
    });
    res.status(204).end();
  });
  app.post('/__sim/oauth/advance', (req, res) => {
    const seconds = Number((req.body as { seconds?: number }).seconds);
    if (!Number.isFinite(seconds) || seconds < 0) {
      res.status(400).json({ error: 'seconds (>= 0) is required' });
      return;
    }
    store.offsetMs += seconds * 1000;
    res.json({ offset_seconds: store.offsetMs / 1000 });
  });
  app.post('/__sim/oauth/strict', (req, res) => {
    store.strict = (req.body as { strict?: boolean }).strict === true;
    res.status(204).end();
  });
  /** Revokes every token a network issued (a user removing the app on the network's side). */
  app.post('/__sim/oauth/revoke', (req, res) => {
    const platform = (req.body as { platform?: string }).platform;
    for (const token of store.tokens.values()) if (token.platform === platform) token.revoked = true;
    if (platform === 'bluesky') blueskyAuthOf(sim).refreshTokens.clear();
    res.status(204).end();
  });
  app.get('/__sim/oauth/tokens', (req, res) => {
    const platform = typeof req.query.platform === 'string' ? req.query.platform : undefined;
    const out = [...store.tokens.entries()]
      .filter(([, t]) => !platform || t.platform === platform)
      .map(([value, t]) => ({ value, ...t, status: store.statusOf(value, t.platform, t.kind) }));
    res.json({ tokens: out });
  });
  app.post('/__sim/oauth/reset', (_req, res) => {
    store.reset();
    blueskyAuthOf(sim).reset();
    res.status(204).end();
  });
}
