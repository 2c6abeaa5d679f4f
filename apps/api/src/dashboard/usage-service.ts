import type { TApiKeyView, TOwnerRepository, TPlan } from '@sps/db';
import type { TRateLimits, TWindowResult } from '../http/rate-limit.js';
import { type TTierB, type TTiersB, tierOf } from '../limits-config.js';
import type { TTwitterAllowance } from '../services/twitter-allowance.js';

/** Keys whose counters are read per call: the dashboard lists at most this many active keys. */
const KEYS_SHOWN = 50;

export interface TUsageDeps {
  owners: TOwnerRepository;
  rateLimits: TRateLimits;
  tiersB: TTiersB;
  twitterAllowance: TTwitterAllowance;
  clock?: () => Date;
}

export interface TWindowView {
  limit: number;
  used: number;
  remaining: number;
  resets_at: string | null;
}

interface TKeyWindows {
  minute: TWindowView;
  publish_hour: TWindowView;
}

export interface TUsageView {
  plan: TPlan;
  rate_limits: {
    /** False with RATE_LIMITS=off: no windows are counted. */
    enabled: boolean;
    tier: TTierB;
    per_minute: number;
    publishes_per_hour: number;
    keys: ({ id: string; prefix: string; last_used_at: string | null } & Partial<TKeyWindows>)[];
    dashboard_session: TKeyWindows | null;
  };
  twitter_allowance: { allowance: number; used: number; remaining: number; resets_at: string };
}

function windowView(result: TWindowResult, now: number): TWindowView {
  return {
    limit: result.limit,
    used: result.limit - result.remaining,
    remaining: result.remaining,
    // A window nobody has counted in yet has no reset time: it starts with the next request.
    resets_at: result.msBeforeNext > 0 ? new Date(now + result.msBeforeNext).toISOString() : null,
  };
}

/**
 * The usage page: the plan, the Variant B tier and what each API key (and this dashboard session, which
 * counts as a key of its own) has left of this minute's requests and this hour's publishes, and the
 * month's X allowance. Read from the API's own limiter counters and allowance counter without consuming.
 */
export function createUsageService(deps: TUsageDeps) {
  const clock = deps.clock ?? (() => new Date());

  async function windowsOf(plan: TPlan, keyId: string): Promise<TKeyWindows | null> {
    const peeked = await deps.rateLimits.peekB(plan, keyId);
    if (!peeked) return null;
    const now = clock().getTime();
    return { minute: windowView(peeked.minute, now), publish_hour: windowView(peeked.publish, now) };
  }

  return {
    async usage(accountId: string, plan: TPlan, sessionKeyId: string): Promise<TUsageView> {
      const keys = (await deps.owners.listApiKeys(accountId))
        .filter((k: TApiKeyView) => !k.revokedAt)
        .slice(0, KEYS_SHOWN);
      const tier = tierOf(plan);
      const [keyWindows, session, allowance] = await Promise.all([
        Promise.all(keys.map((k) => windowsOf(plan, k.id))),
        windowsOf(plan, sessionKeyId),
        deps.twitterAllowance.status(accountId, plan),
      ]);
      return {
        plan,
        rate_limits: {
          enabled: session !== null,
          tier,
          per_minute: deps.tiersB[tier].perMinute,
          publishes_per_hour: deps.tiersB[tier].publishPerHour,
          keys: keys.map((k, i) => ({
            id: k.id,
            prefix: k.prefix,
            last_used_at: k.lastUsedAt?.toISOString() ?? null,
            ...keyWindows[i],
          })),
          dashboard_session: session,
        },
        twitter_allowance: {
          allowance: allowance.allowance,
          used: allowance.used,
          remaining: allowance.remaining,
          resets_at: allowance.resetsAt.toISOString(),
        },
      };
    },
  };
}

export type TUsageService = ReturnType<typeof createUsageService>;
