import type { TPlan } from '@sps/db';

// Plan-dependent limit numbers and the parsers of their configuration strings (loadEnv calls these).

export type TTierB = 'free' | 'starter' | 'pro';

export interface TTierLimitsB {
  perMinute: number;
  publishPerHour: number;
}

export type TTiersB = Record<TTierB, TTierLimitsB>;

export type TTwitterAllowanceByPlan = Record<TPlan, number>;

/** The published Variant B tiers (interface spec, Rate limits B). */
export const DEFAULT_TIERS_B: TTiersB = {
  free: { perMinute: 60, publishPerHour: 10 },
  starter: { perMinute: 300, publishPerHour: 60 },
  pro: { perMinute: 1000, publishPerHour: 300 },
};

/** Not published by the spec; `none` is 0 because such accounts cannot publish at all (plan guard). */
export const DEFAULT_TWITTER_ALLOWANCE: TTwitterAllowanceByPlan = {
  none: 0,
  free: 100,
  starter: 1000,
  pro: 10000,
};

/** A key of an account without an active plan is limited like a free one: it can still read and draft. */
export function tierOf(plan: TPlan): TTierB {
  return plan === 'none' ? 'free' : plan;
}

function entries(value: string): [string, string][] {
  return value
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part.length > 0)
    .map((part) => {
      const at = part.indexOf('=');
      if (at <= 0) throw new Error(`"${part}" is not name=value`);
      return [part.slice(0, at).trim(), part.slice(at + 1).trim()];
    });
}

function positiveInt(value: string, what: string): number {
  if (!/^\d+$/.test(value)) throw new Error(`${what} "${value}" is not a whole number`);
  return Number(value);
}

/** `free=60/10,pro=5000/300`: requests per minute / publishes per hour. */
export function parseTiersB(value: string): TTiersB {
  const tiers: TTiersB = structuredClone(DEFAULT_TIERS_B);
  for (const [name, numbers] of entries(value)) {
    if (!(name in tiers)) throw new Error(`unknown tier "${name}" (free, starter, pro)`);
    const match = /^(\d+)\/(\d+)$/.exec(numbers);
    if (!match?.[1] || !match[2])
      throw new Error(`"${numbers}" for ${name} is not <per minute>/<publishes per hour>`);
    const perMinute = positiveInt(match[1], 'per minute');
    const publishPerHour = positiveInt(match[2], 'per hour');
    if (perMinute < 1 || publishPerHour < 1) throw new Error(`limits of ${name} must be at least 1`);
    tiers[name as TTierB] = { perMinute, publishPerHour };
  }
  return tiers;
}

/** `free=100,starter=1000,pro=10000`. */
export function parseTwitterAllowance(value: string): TTwitterAllowanceByPlan {
  const allowance: TTwitterAllowanceByPlan = { ...DEFAULT_TWITTER_ALLOWANCE };
  for (const [name, count] of entries(value)) {
    if (!(name in allowance)) throw new Error(`unknown plan "${name}" (none, free, starter, pro)`);
    allowance[name as TPlan] = positiveInt(count, name);
  }
  return allowance;
}
