import { createHash } from 'node:crypto';
import { AppError, safeEqual } from '@sps/core';
import type { TOwnerRepository } from '@sps/db';
import type { Request, RequestHandler, Response } from 'express';
import type { SessionStore, TSession } from './session-store.js';

export const SESSION_COOKIE = 'sps_session';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const COOKIE_ID = /^[A-Za-z0-9_-]{20,100}$/;

declare global {
  namespace Express {
    interface Request {
      session?: { id: string; data: TSession };
    }
  }
}

/** The session cookie's value, if the request carries a well-formed one (no cookie library for one cookie). */
export function sessionIdOf(req: Request): string | null {
  const header = req.headers.cookie;
  if (!header || header.length > 8192) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === SESSION_COOKIE) {
      const value = part.slice(eq + 1).trim();
      return COOKIE_ID.test(value) ? value : null;
    }
  }
  return null;
}

export function setSessionCookie(res: Response, id: string, secure: boolean, maxAgeMs: number): void {
  // HttpOnly: page scripts never see it; SameSite=Strict: no other site's page sends it; Path: only the dashboard.
  res.cookie(SESSION_COOKIE, id, {
    httpOnly: true,
    sameSite: 'strict',
    secure,
    path: '/dashboard',
    maxAge: maxAgeMs,
  });
}

export function clearSessionCookie(res: Response, secure: boolean): void {
  res.clearCookie(SESSION_COOKIE, { httpOnly: true, sameSite: 'strict', secure, path: '/dashboard' });
}

/**
 * Authenticates dashboard requests by their session cookie and sets `req.auth` as an API key would, so the
 * public routers serve the dashboard unchanged. State-changing requests must also carry the session's CSRF
 * token in `X-CSRF-Token` (a header another site's form cannot set), compared in constant time.
 */
export function sessionAuthenticate(store: SessionStore, owners: TOwnerRepository): RequestHandler {
  return async (req, _res, next) => {
    const id = sessionIdOf(req);
    const session = id ? await store.get(id) : null;
    if (!id || !session) {
      throw new AppError('unauthorized', 'Not signed in', { fix: 'Sign in to the dashboard again.' });
    }
    if (!SAFE_METHODS.has(req.method)) {
      const presented = req.get('x-csrf-token') ?? '';
      if (!presented || !safeEqual(presented, session.csrf)) {
        throw new AppError('forbidden', 'Missing or wrong CSRF token', {
          fix: 'Reload the dashboard page and try again.',
        });
      }
    }
    // The plan can change while a session lives (admin set-plan): read it, as the key verifier's cache does.
    const owner = await owners.findOwnerView(session.accountId);
    if (!owner) {
      await store.destroy(id);
      throw new AppError('unauthorized', 'Not signed in', { fix: 'Sign in to the dashboard again.' });
    }
    req.session = { id, data: session };
    // Rate limits count per key id: each session is its own "key", so one owner's tabs share one budget.
    req.auth = {
      accountId: owner.id,
      keyId: `session-${createHash('sha256').update(id).digest('hex').slice(0, 32)}`,
      plan: owner.plan,
    };
    next();
  };
}
