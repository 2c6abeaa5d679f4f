import { AppError, safeEqual } from '@sps/core';
import type { TOwnerRepository } from '@sps/db';
import type { Request, RequestHandler, Response } from 'express';
import { SessionStore, type TSession } from './session-store.js';

export const SESSION_COOKIE = 'sps_session';
/**
 * Binds OAuth flows started from the dashboard to the browser that started them. `SameSite=Lax` (a network's
 * redirect back is a cross-site top-level GET, which never carries the `Strict` session cookie) and only on
 * the callback's path; it authorizes nothing by itself.
 */
export const CONNECT_COOKIE = 'sps_connect';
export const CONNECT_COOKIE_PATH = '/oauth/callback';
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
  return cookieOf(req, SESSION_COOKIE);
}

/** A well-formed cookie value by name, or null (no cookie library for two cookies). */
export function cookieOf(req: Request, name: string): string | null {
  const header = req.headers.cookie;
  if (!header || header.length > 8192) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      const value = part.slice(eq + 1).trim();
      return COOKIE_ID.test(value) ? value : null;
    }
  }
  return null;
}

/**
 * `secure` comes from `PUBLIC_URL`'s scheme, not from `req.secure`: behind a TLS proxy the request the API sees
 * may be plain http (and `req.secure` false) while the browser is on https.
 */
export function setSessionCookie(
  res: Response,
  session: { id: string; connect: string },
  secure: boolean,
  maxAgeMs: number,
): void {
  // HttpOnly: page scripts never see it; SameSite=Strict: no other site's page sends it; Path: only the dashboard.
  res.cookie(SESSION_COOKIE, session.id, {
    httpOnly: true,
    sameSite: 'strict',
    secure,
    path: '/dashboard',
    maxAge: maxAgeMs,
  });
  res.cookie(CONNECT_COOKIE, session.connect, {
    httpOnly: true,
    sameSite: 'lax',
    secure,
    path: CONNECT_COOKIE_PATH,
    maxAge: maxAgeMs,
  });
}

export function clearSessionCookie(res: Response, secure: boolean): void {
  res.clearCookie(SESSION_COOKIE, { httpOnly: true, sameSite: 'strict', secure, path: '/dashboard' });
  res.clearCookie(CONNECT_COOKIE, { httpOnly: true, sameSite: 'lax', secure, path: CONNECT_COOKIE_PATH });
}

/**
 * Authenticates dashboard requests by their session cookie and sets `req.auth` as an API key would, so the
 * public routers serve the dashboard unchanged. State-changing requests must also carry the session's CSRF
 * token in `X-CSRF-Token` (a header another site's form cannot set), compared in constant time.
 */
/**
 * Whether a session still stands, as `sessionAuthenticate` judges it (stored, and of the account's current
 * session generation), without restarting its idle timer: an open event stream checks it at each heartbeat.
 */
export function sessionAlive(store: SessionStore, owners: TOwnerRepository) {
  return async (id: string): Promise<boolean> => {
    const session = await store.peekByHash(SessionStore.hashOf(id));
    if (!session) return false;
    const owner = await owners.findOwnerView(session.accountId);
    return owner !== null && owner.sessionGeneration === (session.generation ?? 0);
  };
}

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
    // So is the session generation: a new password or "sign out everywhere" ends sessions made before it.
    const owner = await owners.findOwnerView(session.accountId);
    if (!owner || owner.sessionGeneration !== (session.generation ?? 0)) {
      await store.destroy(id);
      throw new AppError('unauthorized', 'Not signed in', { fix: 'Sign in to the dashboard again.' });
    }
    req.session = { id, data: session };
    // Rate limits count per key id: each session is its own "key", so one owner's tabs share one budget.
    req.auth = {
      accountId: owner.id,
      keyId: `session-${SessionStore.hashOf(id).slice(0, 32)}`,
      plan: owner.plan,
    };
    next();
  };
}
