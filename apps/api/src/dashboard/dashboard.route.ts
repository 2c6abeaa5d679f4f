import {
  AppError,
  decoyPasswordHash,
  generateApiKey,
  hashPassword,
  needsRehash,
  parseOrThrow,
  UUID_PATTERN,
  verifyPassword,
} from '@sps/core';
import type { TAccountRepository, TMediaRepository, TOwnerRepository } from '@sps/db';
import type { TRedis } from '@sps/queue';
import { type RequestHandler, Router } from 'express';
import type { Logger } from 'pino';
import { z } from 'zod';
import { ApiKeyVerifier } from '../http/auth.js';
import { clientKey } from '../http/client-address.js';
import { errorHandler, notFoundRoute } from '../http/error-handler.js';
import { jsonBody } from '../http/json-body.js';
import { retryAfterSeconds, type WindowLimiter } from '../http/rate-limit.js';
import type { TMediaService } from '../media/media-service.js';
import type { TConnectOption } from '../services/connect-service.js';
import { eventsRoute } from './events.route.js';
import type { LiveEvents } from './live-events.js';
import { mediaLibraryRouter } from './media-library.route.js';
import {
  clearSessionCookie,
  sessionAlive,
  sessionAuthenticate,
  sessionIdOf,
  setSessionCookie,
} from './session-auth.js';
import type { SessionStore } from './session-store.js';
import type { TUsageService } from './usage-service.js';

/** Active keys one account may hold: a key list is shown whole, and keys are cheap to revoke and make. */
export const MAX_ACTIVE_KEYS = 50;

const ZSignIn = z.object({
  // An e-mail address, nothing else: `%` or `_` are matched as themselves (never as patterns), and a value
  // that is not an address is a 400 naming `email` before any query or limiter key is spent on it.
  email: z.string().trim().max(320).pipe(z.email('must be an e-mail address')),
  password: z.string().min(1).max(400),
});

export interface TDashboardDeps {
  store: SessionStore;
  owners: TOwnerRepository;
  accounts: TAccountRepository;
  redis: TRedis;
  /** The deployment's QUEUE_PREFIX: the channel that evicts revoked keys from every API process. */
  prefix: string;
  logger: Logger;
  /** Sign-in attempts per client address and per e-mail, so passwords cannot be guessed at speed. */
  signInLimits: { perIp: WindowLimiter; perEmail: WindowLimiter };
  idleMs: number;
  /** `PUBLIC_URL` is https: the cookies get `Secure` (whatever the request the API sees looks like). */
  secureCookies: boolean;
  /** The interval queue's settings, expected slots and next free slots (as MCP's `queue://schedule`). */
  queueSchedule: (accountId: string) => Promise<unknown>;
  /** Plan, rate-limit windows and the X allowance, peeked from the API's own counters. */
  usage: TUsageService;
  /** How each network is connected on this server (the connect service's own view). */
  connectOptions: () => TConnectOption[];
  /** The public routers, mounted again behind the session: the dashboard re-implements no rule. */
  variantA: (authenticate: RequestHandler) => Router;
  variantB: (authenticate: RequestHandler) => Router;
  /** The live updates of `GET /dashboard/api/events`. */
  live: LiveEvents;
  eventsHeartbeatMs: number;
  /** The media library (the Media page's list with usage and quota). */
  media: TMediaService;
  mediaUsage: Pick<TMediaRepository, 'usageCounts'>;
  publicUrl: string;
}

function ownerView(owner: { id: string; name: string; ownerEmail: string; plan: string }) {
  return { id: owner.id, name: owner.name, email: owner.ownerEmail, plan: owner.plan };
}

function keyView(key: {
  id: string;
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}) {
  return {
    id: key.id,
    prefix: key.prefix,
    created_at: key.createdAt.toISOString(),
    last_used_at: key.lastUsedAt?.toISOString() ?? null,
    revoked_at: key.revokedAt?.toISOString() ?? null,
  };
}

async function limited(limiter: WindowLimiter, key: string): Promise<void> {
  const result = await limiter.consume(key);
  if (result.allowed) return;
  const retryAfter = retryAfterSeconds(result);
  throw new AppError('rate_limited', 'Too many sign-in attempts', {
    fix: `Wait ${Math.ceil(retryAfter / 60)} minute(s) before trying again.`,
    retryAfter,
  });
}

/**
 * `/dashboard/api`: sign-in, sign-out and the session (with its CSRF token), the account's API keys, and the
 * public Variant B (`/v1`) and Variant A (`/a`) routers behind the session. Errors in Variant B's shape.
 */
export function dashboardApiRouter(deps: TDashboardDeps): Router {
  const router = Router();
  const authenticate = sessionAuthenticate(deps.store, deps.owners);
  const secure = deps.secureCookies;

  router.post('/session', jsonBody('16kb'), async (req, res) => {
    await limited(deps.signInLimits.perIp, clientKey(req.ip));
    const input = parseOrThrow(ZSignIn, req.body ?? {}, 'Send {"email": "...", "password": "..."}.');
    await limited(deps.signInLimits.perEmail, input.email.toLowerCase());
    const candidates = await deps.owners.signInCandidates(input.email);
    let match: (typeof candidates)[number] | undefined;
    for (const candidate of candidates) {
      if (await verifyPassword(input.password, candidate.passwordHash)) {
        match = candidate;
        break;
      }
    }
    // No account: verify against a decoy, so an unknown e-mail takes as long as a wrong password.
    if (candidates.length === 0) await verifyPassword(input.password, await decoyPasswordHash());
    if (!match) {
      throw new AppError('unauthorized', 'Wrong e-mail or password', {
        fix: 'Check both; the account owner can set a password with `admin account set-password`.',
      });
    }
    if (needsRehash(match.passwordHash)) {
      // A hash made with older scrypt parameters: the password is known now, so store it with today's.
      await deps.owners.upgradePasswordHash(match.id, match.passwordHash, await hashPassword(input.password));
    }
    const previous = sessionIdOf(req);
    if (previous) await deps.store.destroy(previous);
    const { id, session } = await deps.store.create(match.id, match.plan, match.sessionGeneration);
    setSessionCookie(res, { id, connect: session.connect ?? '' }, secure, deps.idleMs);
    const owner = await deps.owners.findOwnerView(match.id);
    res.json({ account: owner ? ownerView(owner) : null, csrf_token: session.csrf });
  });

  router.get('/session', authenticate, async (req, res) => {
    const owner = await deps.owners.findOwnerView(req.auth!.accountId);
    res.json({ account: owner ? ownerView(owner) : null, csrf_token: req.session!.data.csrf });
  });

  router.delete('/session', authenticate, async (req, res) => {
    await deps.store.destroy(req.session!.id);
    clearSessionCookie(res, secure);
    res.status(204).end();
  });

  // "Sign out everywhere": every session of the account ends (other browsers at their next request), this one now.
  router.delete('/sessions', authenticate, async (req, res) => {
    await deps.owners.endAllSessions(req.auth!.accountId);
    await deps.store.destroy(req.session!.id);
    clearSessionCookie(res, secure);
    res.status(204).end();
  });

  router.get('/keys', authenticate, async (req, res) => {
    const keys = await deps.owners.listApiKeys(req.auth!.accountId);
    res.json({ keys: keys.map(keyView) });
  });

  router.post('/keys', authenticate, async (req, res) => {
    const accountId = req.auth!.accountId;
    const active = (await deps.owners.listApiKeys(accountId)).filter((k) => !k.revokedAt).length;
    if (active >= MAX_ACTIVE_KEYS) {
      throw new AppError('conflict', `This account already has ${MAX_ACTIVE_KEYS} active API keys`, {
        fix: 'Revoke keys you no longer use first.',
      });
    }
    const key = generateApiKey();
    const row = await deps.accounts.createApiKey(accountId, key);
    res.status(201).json({ id: row.id, key: key.key, prefix: key.prefix });
  });

  router.delete('/keys/:id', authenticate, async (req, res) => {
    const keyId = String(req.params['id']);
    const revoked = UUID_PATTERN.test(keyId)
      ? await deps.owners.revokeApiKeyOf(req.auth!.accountId, keyId)
      : null;
    if (!revoked) throw new AppError('not_found', 'No such API key');
    // Every API process drops the key from its cache at once (the admin CLI's `key revoke` does the same).
    await deps.redis.publish(ApiKeyVerifier.channel(deps.prefix), revoked.hash).catch((err: unknown) => {
      deps.logger.warn(
        { err },
        'could not broadcast a key revocation; caches expire after API_KEY_CACHE_TTL',
      );
    });
    res.status(204).end();
  });

  router.get('/queue-schedule', authenticate, async (req, res) => {
    res.json(await deps.queueSchedule(req.auth!.accountId));
  });

  router.get('/usage', authenticate, async (req, res) => {
    const auth = req.auth!;
    res.json(await deps.usage.usage(auth.accountId, auth.plan, auth.keyId));
  });

  router.get('/connect-options', authenticate, (_req, res) => {
    res.json({ networks: deps.connectOptions() });
  });

  router.get(
    '/events',
    authenticate,
    eventsRoute({
      live: deps.live,
      sessionAlive: sessionAlive(deps.store, deps.owners),
      heartbeatMs: deps.eventsHeartbeatMs,
      logger: deps.logger,
    }),
  );

  router.use(
    mediaLibraryRouter({
      authenticate,
      media: deps.media,
      usage: deps.mediaUsage,
      publicUrl: deps.publicUrl,
    }),
  );
  router.use('/v1', deps.variantB(authenticate));
  router.use('/a', deps.variantA(authenticate));
  router.use(notFoundRoute);
  router.use(errorHandler('B', deps.logger));
  return router;
}
