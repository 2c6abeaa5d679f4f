import { AppError, type TPlatform } from '@sps/core';
import { type TPlan, type TUsageRepository, usageMonth } from '@sps/db';
import type { TTwitterAllowanceByPlan } from '../limits-config.js';

const PLATFORM: TPlatform = 'twitter';

/** First instant of the next calendar month in UTC: when the allowance starts over. */
export function nextMonthStart(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
}

/**
 * Variant A: the monthly allowance of twitter publishes by plan, counted in PostgreSQL so every API process
 * sees one count. A publish reserves a unit when it starts (not when the network answers), so a publish
 * that later fails at twitter still counts; a publish that does not start gives its unit back.
 */
export function createTwitterAllowance(
  usage: TUsageRepository,
  allowanceByPlan: TTwitterAllowanceByPlan,
  clock: () => Date = () => new Date(),
) {
  function usedUp(plan: TPlan, used: number, now: Date): AppError {
    const allowance = allowanceByPlan[plan];
    const resetsAt = nextMonthStart(now).toISOString();
    return new AppError(
      'quota_exceeded',
      `The monthly twitter publishing allowance of the ${plan} plan (${allowance}) is used up`,
      {
        fix: `Publish to other networks, wait until ${resetsAt} when the allowance starts over, or upgrade the plan.`,
        details: { platform: PLATFORM, plan, allowance, used, remaining: 0, resets_at: resetsAt },
      },
    );
  }

  return {
    /** Refuses (403) when nothing is left, without using anything: creating a post that lists twitter. */
    async ensureAvailable(accountId: string, plan: TPlan): Promise<void> {
      const now = clock();
      const used = await usage.used(accountId, PLATFORM, usageMonth(now));
      if (used >= allowanceByPlan[plan]) throw usedUp(plan, used, now);
    },

    /** Takes one twitter publish of this month or refuses (403); the returned function gives it back. */
    async reserve(accountId: string, plan: TPlan): Promise<() => Promise<void>> {
      const now = clock();
      const month = usageMonth(now);
      const outcome = await usage.reserve(accountId, PLATFORM, month, allowanceByPlan[plan]);
      if (!outcome.reserved) throw usedUp(plan, outcome.used, now);
      return () => usage.release(accountId, PLATFORM, month);
    },
  };
}

export type TTwitterAllowance = ReturnType<typeof createTwitterAllowance>;
