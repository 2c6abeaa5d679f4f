import { nextQueueSlots, type TPostRecord } from '@sps/core';
import type { TDb, TTx } from './client.js';
import { POST_INCLUDE, toPostRecord } from './post-mapper.js';
import { DEFAULT_QUEUE_SETTINGS } from './settings-repository.js';

/** Locks the account's queue settings row (creating it with defaults), so planners never race. */
async function lockSettings(tx: TTx, accountId: string) {
  await tx.$executeRaw`
    INSERT INTO queue_settings (account_id, enabled, interval_hours, start_hour, end_hour, timezone, updated_at)
    VALUES (${accountId}::uuid, ${DEFAULT_QUEUE_SETTINGS.enabled}, ${DEFAULT_QUEUE_SETTINGS.intervalHours},
            ${DEFAULT_QUEUE_SETTINGS.startHour}, ${DEFAULT_QUEUE_SETTINGS.endHour}, ${DEFAULT_QUEUE_SETTINGS.timezone}, now())
    ON CONFLICT (account_id) DO NOTHING`;
  const rows = await tx.$queryRaw<
    {
      enabled: boolean;
      interval_hours: number;
      start_hour: number;
      end_hour: number;
      timezone: string;
      last_slot_at: Date | null;
      next_slot_at: Date | null;
    }[]
  >`SELECT enabled, interval_hours, start_hour, end_hour, timezone, last_slot_at, next_slot_at
    FROM queue_settings WHERE account_id = ${accountId}::uuid FOR UPDATE`;
  const row = rows[0];
  if (!row) throw new Error('queue settings row missing after upsert');
  return {
    settings: {
      enabled: row.enabled,
      intervalHours: row.interval_hours,
      startHour: row.start_hour,
      endHour: row.end_hour,
      timezone: row.timezone,
    },
    lastSlotAt: row.last_slot_at,
    nextSlotAt: row.next_slot_at,
  };
}

const QUEUED = { status: 'draft', queueState: 'queued', deletedAt: null } as const;

export function createQueueRepository(db: TDb) {
  return {
    /**
     * Decides the account's next slot: one post per slot, strictly after the last used slot and now.
     * Returns null when the queue is empty or disabled (queued posts wait).
     */
    async planNext(accountId: string, now: Date): Promise<Date | null> {
      return db.$transaction(async (tx) => {
        const state = await lockSettings(tx, accountId);
        const queued = await tx.post.count({ where: { accountId, ...QUEUED } });
        let next: Date | null = null;
        if (state.settings.enabled && queued > 0) {
          const after = state.lastSlotAt && state.lastSlotAt > now ? state.lastSlotAt : now;
          next = nextQueueSlots(state.settings, after, 1)[0] ?? null;
          // A slot already planned and still ahead stays: re-planning never pushes a post later.
          if (state.nextSlotAt && state.nextSlotAt > now && (!next || state.nextSlotAt < next))
            next = state.nextSlotAt;
        }
        await tx.queueSettings.update({ where: { accountId }, data: { nextSlotAt: next } });
        return next;
      });
    },

    /**
     * Takes the oldest queued post for the slot at `slotAt`. A stale slot (settings changed, already
     * taken) takes nothing.
     */
    async takeSlot(accountId: string, slotAt: Date): Promise<TPostRecord | null> {
      return db.$transaction(async (tx) => {
        const state = await lockSettings(tx, accountId);
        if (!state.nextSlotAt || state.nextSlotAt.getTime() !== slotAt.getTime() || !state.settings.enabled)
          return null;
        const candidates = await tx.$queryRaw<{ id: string }[]>`
          SELECT id FROM posts
          WHERE account_id = ${accountId}::uuid AND status = 'draft' AND queue_state = 'queued' AND deleted_at IS NULL
          ORDER BY queued_at ASC NULLS LAST, created_at ASC, id ASC
          LIMIT 1 FOR UPDATE SKIP LOCKED`;
        await tx.queueSettings.update({
          where: { accountId },
          data: { lastSlotAt: slotAt, nextSlotAt: null },
        });
        const id = candidates[0]?.id;
        if (!id) return null;
        const row = await tx.post.findUnique({ where: { id }, include: POST_INCLUDE });
        return row ? toPostRecord(row) : null;
      });
    },

    /** Accounts with queued posts whose next slot is missing or overdue (reconciler). */
    async accountsNeedingPlan(now: Date, graceMs: number): Promise<string[]> {
      const rows = await db.$queryRaw<{ account_id: string }[]>`
        SELECT DISTINCT p.account_id FROM posts p
        LEFT JOIN queue_settings q ON q.account_id = p.account_id
        WHERE p.status = 'draft' AND p.queue_state = 'queued' AND p.deleted_at IS NULL
          AND (q.account_id IS NULL OR (q.enabled AND (q.next_slot_at IS NULL OR q.next_slot_at < ${new Date(now.getTime() - graceMs)})))
        LIMIT 1000`;
      return rows.map((r) => r.account_id);
    },

    /** Accounts whose planned slot is ahead (reconciler re-adds their delayed job after Redis loss). */
    async plannedSlots(): Promise<{ accountId: string; nextSlotAt: Date }[]> {
      const rows = await db.queueSettings.findMany({
        where: { nextSlotAt: { not: null } },
        select: { accountId: true, nextSlotAt: true },
      });
      return rows.flatMap((r) =>
        r.nextSlotAt ? [{ accountId: r.accountId, nextSlotAt: r.nextSlotAt }] : [],
      );
    },
  };
}

export type TQueueRepository = ReturnType<typeof createQueueRepository>;
