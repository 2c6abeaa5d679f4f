import { isPlatform, safeEqual } from '@sps/core';
import { Router } from 'express';
import type { Logger } from 'pino';
import { CONNECT_COOKIE, cookieOf } from '../dashboard/session-auth.js';
import type { SessionStore } from '../dashboard/session-store.js';
import type { TFailureLimiter } from '../http/auth.js';
import { clientKey } from '../http/client-address.js';
import type { TConnectService } from '../services/connect-service.js';

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function page(title: string, message: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p></body></html>`;
}

/**
 * `GET /oauth/callback/{platform}`: where each network sends the user back. Unauthenticated by nature
 * (a browser redirect); what binds it to an API account is the single-use state.
 */
export function oauthCallbackRouter(
  connect: TConnectService,
  logger: Logger,
  failures: TFailureLimiter,
  sessions: SessionStore,
): Router {
  const router = Router();
  router.get('/oauth/callback/:platform', async (req, res) => {
    // The page holds nothing secret, but it must never be cached or framed.
    res.set({
      'Cache-Control': 'no-store',
      'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
      'Referrer-Policy': 'no-referrer',
    });
    // Each callback with a state costs a DELETE: an address that sent too many unknown or expired states
    // (or wrong API keys: one budget for failed authentications) waits before any query.
    const client = clientKey(req.ip);
    const window = await failures.peek(client);
    if (window && !window.allowed) {
      const retryAfter = Math.max(1, Math.ceil(window.msBeforeNext / 1000));
      res
        .status(429)
        .set('Retry-After', String(retryAfter))
        .type('html')
        .send(
          page(
            'Not connected',
            `Too many connection links that were unknown or expired came from your address. Wait ${retryAfter} seconds, then start connecting again.`,
          ),
        );
      return;
    }
    const platform = req.params.platform;
    if (!isPlatform(platform)) {
      res
        .status(404)
        .type('html')
        .send(page('Unknown network', `There is no network called ${platform}.`));
      return;
    }
    try {
      // A dashboard-started flow: the browser must present the connect cookie of the (still live) session that
      // started it. The session cookie itself never arrives here (Path=/dashboard, SameSite=Strict).
      const holdsSession = async (sessionHash: string) => {
        const presented = cookieOf(req, CONNECT_COOKIE);
        const session = presented ? await sessions.peekByHash(sessionHash) : null;
        return Boolean(presented && session?.connect && safeEqual(presented, session.connect));
      };
      const outcome = await connect.callback(platform, req.query as Record<string, unknown>, holdsSession);
      if (outcome.error === 'invalid_state') await failures.consume(client);
      if (outcome.redirect) {
        res.redirect(302, outcome.redirect);
        return;
      }
      const status = outcome.error === 'invalid_state' ? 400 : outcome.error ? 400 : 200;
      res
        .status(status)
        .type('html')
        .send(page(outcome.error ? 'Not connected' : 'Connected', outcome.message));
    } catch (error) {
      logger.error({ err: (error as Error).message, platform }, 'oauth callback crashed');
      res
        .status(500)
        .type('html')
        .send(page('Not connected', 'Something went wrong. Start connecting again.'));
    }
  });
  return router;
}
