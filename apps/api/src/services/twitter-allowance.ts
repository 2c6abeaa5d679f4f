import {
  type AppError,
  nextMonthStart,
  type TPlatform,
  type TTwitterAllowanceByPlan,
  twitterAllowanceUsedUp,
} from '@sps/core';
import { type TPlan, type TUsageRepository, usageMonth } from '@sps/db';

const PLATFORM: TPlatform = 'twitter';

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
    return twitterAllowanceUsedUp(plan, allowanceByPlan[plan], used, now);
  }

  return {
    /** This month's figures, read without reserving anything (the dashboard's usage page). */
    async status(accountId: string, plan: TPlan) {
      const now = clock();
      const used = await usage.used(accountId, PLATFORM, usageMonth(now));
      const allowance = allowanceByPlan[plan];
      return { allowance, used, remaining: Math.max(0, allowance - used), resetsAt: nextMonthStart(now) };
    },

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
