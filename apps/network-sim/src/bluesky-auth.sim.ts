import { createHash, randomBytes } from 'node:crypto';
import type { Express, Request, Response, Router } from 'express';
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { oauthStoreOf } from './oauth/oauth-store.js';
import { perSim } from './per-sim.js';
import type { SimState } from './sim-state.js';

/**
 * A PDS's app-password sessions, as the reference implementation keeps them
 * (https://github.com/bluesky-social/atproto/tree/main/packages/pds/src):
 * - `createSession` checks the identifier (handle or DID) and app password (401 AuthenticationRequired
 *   "Invalid identifier or password" otherwise) and is rate limited per identifier and client address,
 *   300 a day and 30 per 5 minutes (https://docs.bsky.app/docs/advanced-guides/rate-limits), answering
 *   429 RateLimitExceeded with `RateLimit-Limit/-Remaining/-Reset/-Policy` headers;
 * - session JWTs are HS256 with `scope` (`com.atproto.appPass` for an app password's access JWT,
 *   `com.atproto.refresh` for the refresh JWT), `sub` (the DID) and `exp`; access JWTs live 120 minutes,
 *   refresh JWTs 90 days (`/__sim/oauth/lifetimes` with platform `bluesky` shortens them; the clock is
 *   `/__sim/oauth/advance`'s);
 * - an expired JWT is 400 ExpiredToken "Token has expired", an unverifiable one 400 InvalidToken, a JWT of
 *   the wrong kind 401 InvalidToken "Bad token scope";
 * - `refreshSession` rotates: the refresh JWT it is given is cut to a two-hour grace (within it a replay
 *   gets the same successor), after which a replay is 400 ExpiredToken "Token has been revoked";
 * - revoking an app password deletes the refresh JWTs it opened; its access JWTs run out on their own.
 */

const SCOPE_ACCESS = 'com.atproto.appPass';
const SCOPE_REFRESH = 'com.atproto.refresh';
/** `REFRESH_GRACE_MS` of the reference PDS's account manager. */
const REFRESH_GRACE_MS = 2 * 3600_000;
/** createSession's limits: [window in ms, points]. */
const CREATE_SESSION_LIMITS: [number, number][] = [
  [86_400_000, 300],
  [5 * 60_000, 30],
];

interface TRefreshRecord {
  did: string;
  handle: string;
  expiresAt: number;
  nextId: string | null;
}

export interface TSimSession {
  did: string;
  handle: string;
}

/** The simulator's accounts: a handle's DID is derived from it, so a mentioned handle and a session agree. */
export const didOf = (handle: string) =>
  `did:plc:${createHash('sha256').update(handle).digest('hex').slice(0, 24)}`;

export class BlueskyAuthState {
  readonly secret = randomBytes(32);
  /** Every account that signed in, and handles mentioned; DID → handle for sign-ins by DID. */
  readonly handles = new Set<string>();
  readonly refreshTokens = new Map<string, TRefreshRecord>();
  /** Handles whose app password was revoked: createSession refuses them. */
  readonly revoked = new Set<string>();
  /** createSession calls per `${identifier}-${ip}`, as sim-clock times. */
  readonly attempts = new Map<string, number[]>();
  /** How often each refresh JWT id was presented, and whose it was (tests check none is spent twice). */
  readonly presented = new Map<string, { handle: string; count: number }>();

  handleOf(identifier: string): string {
    const lower = identifier.toLowerCase();
    if (lower.startsWith('did:')) {
      for (const handle of this.handles) if (didOf(handle) === lower) return handle;
      return lower;
    }
    return lower.includes('.') ? lower : `${lower}.bsky.social`;
  }

  reset(): void {
    this.refreshTokens.clear();
    this.revoked.clear();
    this.attempts.clear();
    this.presented.clear();
  }
}

export const blueskyAuthOf = perSim(() => new BlueskyAuthState());

function xrpcError(res: Response, status: number, error: string, message: string): void {
  res.status(status).json({ error, message });
}

/** The bearer JWT of a request, verified at the simulated clock; null when refused (the answer is sent). */
async function verified(
  sim: SimState,
  req: Request,
  res: Response,
  scope: string,
): Promise<{ sub: string; jti?: string } | null> {
  const token = req.headers.authorization?.startsWith('Bearer ') ? req.headers.authorization.slice(7) : '';
  if (!token) {
    xrpcError(res, 401, 'AuthMissing', 'Authentication Required');
    return null;
  }
  try {
    const { payload } = await jwtVerify(token, blueskyAuthOf(sim).secret, {
      currentDate: new Date(oauthStoreOf(sim).now()),
    });
    if (payload.scope !== scope) {
      xrpcError(res, 401, 'InvalidToken', 'Bad token scope');
      return null;
    }
    return { sub: String(payload.sub), ...(payload.jti ? { jti: payload.jti } : {}) };
  } catch (error) {
    if (error instanceof joseErrors.JWTExpired) xrpcError(res, 400, 'ExpiredToken', 'Token has expired');
    else xrpcError(res, 400, 'InvalidToken', 'Token could not be verified');
    return null;
  }
}

/** The session of an access JWT; null when refused (the answer is sent). */
export async function requireSession(
  sim: SimState,
  req: Request,
  res: Response,
): Promise<TSimSession | null> {
  const claims = await verified(sim, req, res, SCOPE_ACCESS);
  if (!claims) return null;
  return { did: claims.sub, handle: blueskyAuthOf(sim).handleOf(claims.sub) };
}

async function issue(sim: SimState, req: Request, session: TSimSession, jti: string) {
  const state = blueskyAuthOf(sim);
  const store = oauthStoreOf(sim);
  const life = store.lifetimesOf('bluesky');
  const now = Math.floor(store.now() / 1000);
  const aud = `did:web:${String(req.get('host') ?? 'localhost').replace(':', '%3A')}`;
  const sign = (claims: Record<string, string>, seconds: number | null, typ: string) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', typ })
      .setSubject(session.did)
      .setAudience(aud)
      .setIssuedAt(now)
      .setExpirationTime(now + (seconds ?? 10 * 365 * 86_400))
      .sign(state.secret);
  const refreshSeconds = life.refreshSeconds ?? 90 * 86_400;
  if (!state.refreshTokens.has(jti)) {
    state.refreshTokens.set(jti, {
      did: session.did,
      handle: session.handle,
      expiresAt: store.now() + refreshSeconds * 1000,
      nextId: null,
    });
  }
  return {
    accessJwt: await sign({ scope: SCOPE_ACCESS }, life.accessSeconds, 'at+jwt'),
    refreshJwt: await sign({ scope: SCOPE_REFRESH, jti }, refreshSeconds, 'refresh+jwt'),
  };
}

function didDocOf(req: Request, did: string) {
  // The DID document names the PDS that holds the repo (the entryway is not always it).
  const pds = `${req.protocol}://${req.get('host')}${req.baseUrl}`;
  return {
    id: did,
    service: [{ id: '#atproto_pds', type: 'AtprotoPersonalDataServer', serviceEndpoint: pds }],
  };
}

/** Counts a createSession against both windows; false (and the 429 sent) once either is used up. */
function rateLimited(sim: SimState, req: Request, res: Response, identifier: string): boolean {
  const state = blueskyAuthOf(sim);
  const now = oauthStoreOf(sim).now();
  const key = `${identifier.toLowerCase()}-${req.ip}`;
  const longest = Math.max(...CREATE_SESSION_LIMITS.map(([ms]) => ms));
  const times = (state.attempts.get(key) ?? []).filter((t) => t > now - longest);
  times.push(now);
  state.attempts.set(key, times);
  // The headers describe the limit closest to running out, as the PDS's rate limiter reports it.
  let tightest: { limit: number; windowMs: number; remaining: number; reset: number } | null = null;
  for (const [windowMs, limit] of CREATE_SESSION_LIMITS) {
    const inWindow = times.filter((t) => t > now - windowMs);
    const remaining = Math.max(0, limit - inWindow.length);
    const reset = Math.ceil(((inWindow[0] ?? now) + windowMs) / 1000);
    if (!tightest || remaining < tightest.remaining) tightest = { limit, windowMs, remaining, reset };
  }
  if (tightest) {
    res.set({
      'RateLimit-Limit': String(tightest.limit),
      'RateLimit-Remaining': String(tightest.remaining),
      'RateLimit-Reset': String(tightest.reset),
      'RateLimit-Policy': `${tightest.limit};w=${tightest.windowMs / 1000}`,
    });
  }
  const over = CREATE_SESSION_LIMITS.some(
    ([windowMs, limit]) => times.filter((t) => t > now - windowMs).length > limit,
  );
  if (over) xrpcError(res, 429, 'RateLimitExceeded', 'Rate Limit Exceeded');
  return over;
}

/** createSession, refreshSession and getSession on a simulated PDS. */
export function registerBlueskyAuth(router: Router, sim: SimState): void {
  const state = blueskyAuthOf(sim);

  router.post('/xrpc/com.atproto.server.createSession', async (req, res) => {
    const body = (req.body ?? {}) as { identifier?: unknown; password?: unknown };
    const identifier = typeof body.identifier === 'string' ? body.identifier.slice(0, 300) : '';
    if (!identifier || typeof body.password !== 'string') {
      xrpcError(res, 400, 'InvalidRequest', 'Input must have the property "identifier"');
      return;
    }
    if (rateLimited(sim, req, res, identifier)) return;
    const handle = state.handleOf(identifier);
    if (!body.password || state.revoked.has(handle) || handle.startsWith('did:')) {
      xrpcError(res, 401, 'AuthenticationRequired', 'Invalid identifier or password');
      return;
    }
    state.handles.add(handle);
    const session = { did: didOf(handle), handle };
    const tokens = await issue(sim, req, session, randomBytes(32).toString('base64'));
    res.json({ ...tokens, did: session.did, didDoc: didDocOf(req, session.did), handle, active: true });
  });

  router.post('/xrpc/com.atproto.server.refreshSession', async (req, res) => {
    const claims = await verified(sim, req, res, SCOPE_REFRESH);
    if (!claims?.jti) {
      if (claims) xrpcError(res, 400, 'InvalidToken', 'Token could not be verified');
      return;
    }
    const now = oauthStoreOf(sim).now();
    const record = state.refreshTokens.get(claims.jti);
    const handle = record?.handle ?? state.handleOf(claims.sub);
    const seen = state.presented.get(claims.jti);
    state.presented.set(claims.jti, { handle, count: (seen?.count ?? 0) + 1 });
    // rotateRefreshToken: the presented token lives on only for the grace period, with one successor.
    const expiresAt = record ? Math.min(record.expiresAt, now + REFRESH_GRACE_MS) : 0;
    if (!record || expiresAt <= now || state.revoked.has(record.handle)) {
      xrpcError(res, 400, 'ExpiredToken', 'Token has been revoked');
      return;
    }
    record.expiresAt = expiresAt;
    record.nextId ??= randomBytes(32).toString('base64');
    const session = { did: record.did, handle: record.handle };
    const tokens = await issue(sim, req, session, record.nextId);
    res.json({
      ...tokens,
      did: session.did,
      didDoc: didDocOf(req, session.did),
      handle: record.handle,
      active: true,
    });
  });

  router.get('/xrpc/com.atproto.server.getSession', async (req, res) => {
    const session = await requireSession(sim, req, res);
    if (!session) return;
    res.json({ did: session.did, handle: session.handle, didDoc: didDocOf(req, session.did), active: true });
  });
}

/**
 * Test controls: `POST /__sim/bluesky/revoke-app-password {identifier}` (the person revoked the app
 * password in Bluesky's settings: sign-ins refused, its refresh JWTs deleted), `GET /__sim/bluesky/refresh-uses`
 * (`?handle=`: how often each of the account's refresh JWTs was presented).
 */
export function registerBlueskyAuthControls(app: Express, sim: SimState): void {
  const state = blueskyAuthOf(sim);
  app.post('/__sim/bluesky/revoke-app-password', (req, res) => {
    const identifier = (req.body as { identifier?: unknown }).identifier;
    if (typeof identifier !== 'string' || !identifier) {
      res.status(400).json({ error: 'identifier is required' });
      return;
    }
    const handle = state.handleOf(identifier);
    state.revoked.add(handle);
    for (const [jti, record] of state.refreshTokens)
      if (record.handle === handle) state.refreshTokens.delete(jti);
    res.status(204).end();
  });
  app.get('/__sim/bluesky/refresh-uses', (req, res) => {
    const handle = typeof req.query.handle === 'string' ? state.handleOf(req.query.handle) : null;
    const uses = [...state.presented.values()].filter((u) => !handle || u.handle === handle);
    res.json({ uses: uses.map((u) => u.count) });
  });
}
