import { nameValueEntries, wholeNumber } from '@sps/core';
import type { TPlan } from '@sps/db';

// Plan-dependent limit numbers and the parsers of their configuration strings (loadEnv calls these).

export type TTierB = 'free' | 'starter' | 'pro';

export interface TTierLimitsB {
  perMinute: number;
  publishPerHour: number;
}

export type TTiersB = Record<TTierB, TTierLimitsB>;

/** The published Variant B tiers (interface spec, Rate limits B). */
export const DEFAULT_TIERS_B: TTiersB = {
  free: { perMinute: 60, publishPerHour: 10 },
  starter: { perMinute: 300, publishPerHour: 60 },
  pro: { perMinute: 1000, publishPerHour: 300 },
};

/** A key of an account without an active plan is limited like a free one: it can still read and draft. */
export function tierOf(plan: TPlan): TTierB {
  return plan === 'none' ? 'free' : plan;
}

/** `free=60/10,pro=5000/300`: requests per minute / publishes per hour. */
export function parseTiersB(value: string): TTiersB {
  const tiers: TTiersB = structuredClone(DEFAULT_TIERS_B);
  for (const [name, numbers] of nameValueEntries(value)) {
    if (!(name in tiers)) throw new Error(`unknown tier "${name}" (free, starter, pro)`);
    const match = /^(\d+)\/(\d+)$/.exec(numbers);
    if (!match?.[1] || !match[2])
      throw new Error(`"${numbers}" for ${name} is not <per minute>/<publishes per hour>`);
    const perMinute = wholeNumber(match[1], 'per minute');
    const publishPerHour = wholeNumber(match[2], 'per hour');
    if (perMinute < 1 || publishPerHour < 1) throw new Error(`limits of ${name} must be at least 1`);
    tiers[name as TTierB] = { perMinute, publishPerHour };
  }
  return tiers;
}
