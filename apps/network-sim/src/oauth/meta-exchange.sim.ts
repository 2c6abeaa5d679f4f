import type { TPlatform } from '@sps/core';
import type { NextFunction, Request, Response, Router } from 'express';
import { graphError } from '../graph-sim.js';
import type { SimState } from '../sim-state.js';
import { oauthStoreOf, SIM_CLIENT_SECRET } from './oauth-store.js';

const DAY_MS = 86_400_000;

/**
 * Meta's long-lived token grants. Threads and Instagram: `GET /access_token?grant_type=th_exchange_token|
 * ig_exchange_token&client_secret&access_token` (a short-lived token for a 60-day one), `GET
 * /refresh_access_token?grant_type=th_refresh_token|ig_refresh_token&access_token` (only once the token
 * is at least 24 hours old and still valid). Facebook: `fb_exchange_token` on /oauth/access_token.
 * https://developers.facebook.com/docs/threads/get-started/long-lived-tokens/
 * https://developers.facebook.com/documentation/instagram-platform/reference/refresh_access_token
 * https://developers.facebook.com/docs/facebook-login/guides/access-tokens/get-long-lived
 */
export function registerMetaExchanges(routerOf: (platform: TPlatform) => Router, sim: SimState): void {
  const store = oauthStoreOf(sim);
  const q = (req: Request, name: string) =>
    typeof req.query[name] === 'string' ? (req.query[name] as string) : '';

  function exchange(platform: TPlatform, grant: string, secretParam: string) {
    return (req: Request, res: Response) => {
      sim.record(platform, req);
      if (q(req, 'grant_type') !== grant) return graphError(res, 400, 100, `grant_type must be ${grant}`);
      if (q(req, secretParam) !== SIM_CLIENT_SECRET)
        return graphError(res, 400, 1, 'Error validating client secret.');
      const presented = req.query.fb_exchange_token ?? req.query.access_token;
      const found = store.tokens.get(String(presented ?? ''));
      if (
        !found ||
        found.platform !== platform ||
        store.statusOf(String(presented), platform, 'access') !== 'valid'
      )
        return graphError(res, 400, 190, 'Error validating access token: Session has expired', {
          error_subcode: 463,
        });
      const issued = store.issue(platform, found.user, found.family, {
        refresh: false,
        accessSeconds: store.lifetimesOf(platform).accessSeconds,
        scopes: found.scopes,
      });
      res.json({
        access_token: issued.accessToken,
        token_type: 'bearer',
        expires_in: issued.expiresIn ?? 5_184_000,
      });
    };
  }

  function refresh(platform: TPlatform, grant: string) {
    return (req: Request, res: Response) => {
      sim.record(platform, req);
      const fault = sim.takeFault(platform, req.originalUrl);
      if (fault?.kind === 'server_error') return graphError(res, 500, 2, 'An unexpected error has occurred.');
      if (q(req, 'grant_type') !== grant) return graphError(res, 400, 100, `grant_type must be ${grant}`);
      const presented = q(req, 'access_token');
      const found = store.tokens.get(presented);
      if (!found || found.platform !== platform || store.statusOf(presented, platform, 'access') !== 'valid')
        return graphError(res, 400, 190, 'Error validating access token: Session has expired', {
          error_subcode: 463,
        });
      if (store.now() - found.issuedAt < DAY_MS)
        return graphError(res, 400, 10, 'The access token must be at least 24 hours old to be refreshed.');
      // The refreshed token replaces the old one.
      found.revoked = true;
      const issued = store.issue(platform, found.user, found.family, {
        refresh: false,
        scopes: found.scopes,
      });
      res.json({
        access_token: issued.accessToken,
        token_type: 'bearer',
        expires_in: issued.expiresIn ?? 5_184_000,
      });
    };
  }

  routerOf('threads').get('/access_token', exchange('threads', 'th_exchange_token', 'client_secret'));
  routerOf('threads').get('/refresh_access_token', refresh('threads', 'th_refresh_token'));
  routerOf('instagram').get('/access_token', exchange('instagram', 'ig_exchange_token', 'client_secret'));
  routerOf('instagram').get('/refresh_access_token', refresh('instagram', 'ig_refresh_token'));
  const fbExchange = exchange('facebook', 'fb_exchange_token', 'client_secret');
  routerOf('facebook').get('/v25.0/oauth/access_token', (req: Request, res: Response, next: NextFunction) => {
    if (q(req, 'grant_type') === 'fb_exchange_token') return fbExchange(req, res);
    next();
  });
}
