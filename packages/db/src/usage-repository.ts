import type { TPlatform } from '@sps/core';
import type { TDb } from './client.js';

/** Calendar month in UTC, the `usage_counters.month` key ('2026-11'). */
export function usageMonth(at: Date): string {
  return at.toISOString().slice(0, 7);
}

export interface TReservation {
  reserved: boolean;
  /** The count after the reservation, or the current count when refused. */
  used: number;
}

/** Monthly per-account, per-network usage counters (Variant A's twitter allowance). */
export function createUsageRepository(db: TDb) {
  async function used(accountId: string, platform: TPlatform, month: string): Promise<number> {
    const row = await db.usageCounter.findUnique({
      where: { accountId_platform_month: { accountId, platform, month } },
      select: { count: true },
    });
    return row?.count ?? 0;
  }

  return {
    used,

    /**
     * Takes one unit if fewer than `limit` are used, in a single statement: the row lock of the upsert
     * serialises concurrent requests, so together they can never take more than `limit`.
     */
    async reserve(
      accountId: string,
      platform: TPlatform,
      month: string,
      limit: number,
    ): Promise<TReservation> {
      const rows = await db.$queryRaw<{ count: number }[]>`
        INSERT INTO usage_counters (account_id, platform, month, count, updated_at)
        SELECT ${accountId}::uuid, ${platform}::"Platform", ${month}, 1, now()
        WHERE ${limit}::int > 0
        ON CONFLICT (account_id, platform, month)
        DO UPDATE SET count = usage_counters.count + 1, updated_at = now()
        WHERE usage_counters.count < ${limit}::int
        RETURNING count`;
      const row = rows[0];
      if (row) return { reserved: true, used: row.count };
      return { reserved: false, used: await used(accountId, platform, month) };
    },

    /** Gives a unit back (a reserved publish that did not start). */
    async release(accountId: string, platform: TPlatform, month: string): Promise<void> {
      await db.$executeRaw`
        UPDATE usage_counters SET count = count - 1, updated_at = now()
        WHERE account_id = ${accountId}::uuid AND platform = ${platform}::"Platform" AND month = ${month} AND count > 0`;
    },
  };
}

export type TUsageRepository = ReturnType<typeof createUsageRepository>;
