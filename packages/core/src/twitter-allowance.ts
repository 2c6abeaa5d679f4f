import { AppError } from './app-error.js';

// Variant A's monthly twitter allowance: per-plan numbers from configuration, the month they count in,
// and the error both the API (publish requests) and the publisher (scheduled and queued posts) give.

export const ALLOWANCE_PLANS = ['none', 'free', 'starter', 'pro'] as const;
export type TAllowancePlan = (typeof ALLOWANCE_PLANS)[number];
export type TTwitterAllowanceByPlan = Record<TAllowancePlan, number>;

/** Not published by the spec; `none` is 0 because such accounts cannot publish at all (plan guard). */
export const DEFAULT_TWITTER_ALLOWANCE: TTwitterAllowanceByPlan = {
  none: 0,
  free: 100,
  starter: 1000,
  pro: 10000,
};

/** `a=1,b=2` as pairs; a part without `=` is an error naming it. */
export function nameValueEntries(value: string): [string, string][] {
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

export function wholeNumber(value: string, what: string): number {
  if (!/^\d+$/.test(value)) throw new Error(`${what} "${value}" is not a whole number`);
  return Number(value);
}

/** `free=100,starter=1000,pro=10000`; unlisted plans keep the defaults. */
export function parseTwitterAllowance(value: string): TTwitterAllowanceByPlan {
  const allowance: TTwitterAllowanceByPlan = { ...DEFAULT_TWITTER_ALLOWANCE };
  for (const [name, count] of nameValueEntries(value)) {
    if (!(name in allowance)) throw new Error(`unknown plan "${name}" (${ALLOWANCE_PLANS.join(', ')})`);
    allowance[name as TAllowancePlan] = wholeNumber(count, name);
  }
  return allowance;
}

/** First instant of the next calendar month in UTC: when the allowance starts over. */
export function nextMonthStart(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
}

/** 403 `quota_exceeded` with what is left (nothing) and when it starts over. */
export function twitterAllowanceUsedUp(
  plan: TAllowancePlan,
  allowance: number,
  used: number,
  now: Date,
): AppError {
  const resetsAt = nextMonthStart(now).toISOString();
  return new AppError(
    'quota_exceeded',
    `The monthly twitter publishing allowance of the ${plan} plan (${allowance}) is used up`,
    {
      fix: `Publish to other networks, wait until ${resetsAt} when the allowance starts over, or upgrade the plan.`,
      details: { platform: 'twitter', plan, allowance, used, remaining: 0, resets_at: resetsAt },
    },
  );
}
