import { createHash, randomBytes } from 'node:crypto';
import type { TPlatform } from '@sps/core';
import type { Request } from 'express';
import { perSim } from '../per-sim.js';
import type { SimState } from '../sim-state.js';

/**
 * The simulated authorization servers' memory: registered clients, codes, access and refresh tokens
 * with their grant (family), and a clock tests can move forward. Tokens the simulator issues carry a
 * recognisable prefix; any other bearer string is a token from outside (the admin CLI's `--token`) and
 * is let through as before unless strict mode is on.
 */

export interface TSimCode {
  platform: TPlatform;
  clientId: string;
  redirectUri: string;
  challenge: string | null;
  challengeMethod: string | null;
  user: string;
  scopes: string;
  expiresAt: number;
  used: boolean;
  /** Tokens issued from this code; a reused code revokes them (RFC 6749 §4.1.2). */
  family: string | null;
}

export interface TSimToken {
  platform: TPlatform;
  family: string;
  user: string;
  expiresAt: number | null;
  revoked: boolean;
  /** Refresh tokens: spent once used (rotating networks). */
  spent: boolean;
  /** Access tokens: when issued (Meta refuses refreshing younger than a day). */
  issuedAt: number;
  kind: 'access' | 'refresh';
  /** What the person granted (the code's scopes; a refresh keeps them). */
  scopes: string;
}

export interface TLifetimes {
  accessSeconds: number | null;
  refreshSeconds: number | null;
}

/** Each network's default lifetimes, from its documentation (seconds; null: does not expire). */
export const DEFAULT_LIFETIMES: Partial<Record<TPlatform, TLifetimes>> = {
  twitter: { accessSeconds: 7200, refreshSeconds: null },
  youtube: { accessSeconds: 3599, refreshSeconds: null },
  linkedin: { accessSeconds: 5_184_000, refreshSeconds: 31_536_000 },
  tiktok: { accessSeconds: 86_400, refreshSeconds: 31_536_000 },
  threads: { accessSeconds: 5_184_000, refreshSeconds: null },
  instagram: { accessSeconds: 5_184_000, refreshSeconds: null },
  facebook: { accessSeconds: 5_184_000, refreshSeconds: null },
  mastodon: { accessSeconds: null, refreshSeconds: null },
  // Session JWTs of an app-password sign-in (the reference PDS: 120 minutes and 90 days).
  bluesky: { accessSeconds: 7200, refreshSeconds: 7_776_000 },
};

/** The client every simulated network knows (README: OAUTH_<NAME>_CLIENT_ID / _SECRET for the simulator). */
export const SIM_CLIENT_ID = 'sps-sim-client';
export const SIM_CLIENT_SECRET = 'sps-sim-secret';

export class OAuthSimStore {
  readonly codes = new Map<string, TSimCode>();
  readonly tokens = new Map<string, TSimToken>();
  readonly lifetimes = new Map<TPlatform, TLifetimes>();
  /** Mastodon apps registered per instance: client id → secret and redirect URIs. */
  readonly apps = new Map<string, { secret: string; redirectUris: string[]; platform: TPlatform }>();
  /** Tests move the simulated networks' clock forward to let tokens expire. */
  offsetMs = 0;
  /** Refuse bearer tokens the simulator never issued (off by default: older tests use arbitrary tokens). */
  strict = false;

  now(): number {
    return Date.now() + this.offsetMs;
  }

  lifetimesOf(platform: TPlatform): TLifetimes {
    return (
      this.lifetimes.get(platform) ??
      DEFAULT_LIFETIMES[platform] ?? { accessSeconds: 3600, refreshSeconds: null }
    );
  }

  clientSecretOf(platform: TPlatform, clientId: string): string | null {
    if (clientId === SIM_CLIENT_ID) return SIM_CLIENT_SECRET;
    const app = this.apps.get(clientId);
    return app && app.platform === platform ? app.secret : null;
  }

  newCode(code: Omit<TSimCode, 'used' | 'family' | 'expiresAt'>, ttlSeconds: number): string {
    const value = `sim-${code.platform}-code-${randomBytes(12).toString('hex')}`;
    this.codes.set(value, { ...code, used: false, family: null, expiresAt: this.now() + ttlSeconds * 1000 });
    return value;
  }

  /** An access token (and a refresh token where the network gives one) in one family. */
  issue(
    platform: TPlatform,
    user: string,
    family: string,
    options: { refresh: boolean; accessSeconds?: number | null; scopes?: string },
  ): {
    accessToken: string;
    refreshToken: string | null;
    expiresIn: number | null;
    refreshExpiresIn: number | null;
  } {
    const life = this.lifetimesOf(platform);
    const accessSeconds = options.accessSeconds === undefined ? life.accessSeconds : options.accessSeconds;
    const now = this.now();
    const accessToken = `sim-${platform}-at-${randomBytes(16).toString('hex')}`;
    this.tokens.set(accessToken, {
      platform,
      family,
      user,
      kind: 'access',
      expiresAt: accessSeconds === null ? null : now + accessSeconds * 1000,
      revoked: false,
      spent: false,
      issuedAt: now,
      scopes: options.scopes ?? '',
    });
    let refreshToken: string | null = null;
    if (options.refresh) {
      refreshToken = `sim-${platform}-rt-${randomBytes(16).toString('hex')}`;
      this.tokens.set(refreshToken, {
        platform,
        family,
        user,
        kind: 'refresh',
        expiresAt: life.refreshSeconds === null ? null : now + life.refreshSeconds * 1000,
        revoked: false,
        spent: false,
        issuedAt: now,
        scopes: options.scopes ?? '',
      });
    }
    return { accessToken, refreshToken, expiresIn: accessSeconds, refreshExpiresIn: life.refreshSeconds };
  }

  /** Revokes every token of a family (X does this when a spent refresh token is replayed). */
  revokeFamily(family: string): void {
    for (const token of this.tokens.values()) if (token.family === family) token.revoked = true;
  }

  /** `valid`, `expired`, `revoked`, or `foreign` (not issued here). */
  statusOf(
    token: string,
    platform: TPlatform,
    kind: 'access' | 'refresh',
  ): 'valid' | 'expired' | 'revoked' | 'foreign' {
    const found = this.tokens.get(token);
    if (!found || found.platform !== platform || found.kind !== kind) {
      return token.startsWith(`sim-${platform}-`) ? 'revoked' : 'foreign';
    }
    if (found.revoked || found.spent) return 'revoked';
    if (found.expiresAt !== null && found.expiresAt <= this.now()) return 'expired';
    return 'valid';
  }

  reset(): void {
    this.codes.clear();
    this.tokens.clear();
    this.lifetimes.clear();
    this.apps.clear();
    this.offsetMs = 0;
    this.strict = false;
  }
}

export const oauthStoreOf = perSim(() => new OAuthSimStore());

/** The bearer token of a request (Authorization header, or Graph's `access_token` query parameter). */
export function bearerOf(req: Request): string | null {
  const header = req.headers.authorization;
  if (header?.startsWith('Bearer ')) return header.slice(7);
  // Meta's Graph takes `Authorization: OAuth <token>` as well (the Resumable Upload API's form).
  if (header?.startsWith('OAuth ')) return header.slice(6);
  if (typeof req.query.access_token === 'string') return req.query.access_token;
  return null;
}

/**
 * The shared token check of every simulated network API: an access token the simulator issued that has
 * expired or been revoked is refused in the network's own 401 shape (the middleware renders it).
 */
export function refusesToken(sim: SimState, platform: TPlatform, req: Request): boolean {
  const token = bearerOf(req);
  // Bluesky's PDS checks its own session JWTs (bluesky-auth.sim.ts), with its own errors.
  if (!token || platform === 'bluesky') return false;
  const store = oauthStoreOf.peek(sim);
  if (!store) return token.startsWith(`sim-${platform}-at-`);
  const status = store.statusOf(token, platform, 'access');
  if (status === 'foreign') return store.strict;
  return status !== 'valid';
}

/**
 * The simulated user a request speaks for: an issued token's user, else `sim_user` (a token from outside,
 * as the identity look-ups answer it), so that what a user wrote can be listed back for them.
 */
export function simUserOf(sim: SimState, platform: TPlatform, req: Request): string {
  const token = bearerOf(req);
  if (!token) return 'sim_user';
  const found = oauthStoreOf(sim).tokens.get(token);
  return found && found.platform === platform ? found.user : 'sim_user';
}

/** Stable ids per simulated user name, in each network's style. */
export function numericIdOf(user: string, digits = 18): string {
  const hex = createHash('sha256').update(user).digest('hex');
  return (BigInt(`0x${hex.slice(0, 15)}`) % 10n ** BigInt(digits)).toString().padStart(digits, '1');
}

export function hashIdOf(user: string, length = 24): string {
  return createHash('sha256').update(user).digest('hex').slice(0, length);
}

/**
 * The scopes behind a request's bearer token: what the person granted for a token the simulator issued,
 * null for a token from outside (the admin CLI's `--token`), which is let through as before.
 */
export function grantedScopesOf(sim: SimState, platform: TPlatform, req: Request): Set<string> | null {
  const token = bearerOf(req);
  const found = token ? oauthStoreOf(sim).tokens.get(token) : undefined;
  if (!found || found.platform !== platform) return null;
  return new Set(found.scopes.split(/[ ,]+/).filter(Boolean));
}
