import type { TPlatform, TPresetRecord, TQueueSettings } from '@sps/core';
import type { TDb } from './client.js';
import { Prisma } from './generated/prisma/client.js';
import type { PresetModel } from './generated/prisma/models/Preset.js';

export const DEFAULT_QUEUE_SETTINGS: TQueueSettings = {
  enabled: true,
  intervalHours: 4,
  startHour: 9,
  endHour: 17,
  timezone: 'UTC',
};

function toPreset(row: PresetModel): TPresetRecord {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    platforms: row.platforms as TPlatform[],
    defaults: (row.defaults ?? null) as Record<string, unknown> | null,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

export function createSettingsRepository(db: TDb) {
  return {
    async getQueueSettings(accountId: string): Promise<TQueueSettings> {
      const row = await db.queueSettings.findUnique({ where: { accountId } });
      if (!row) return { ...DEFAULT_QUEUE_SETTINGS };
      return {
        enabled: row.enabled,
        intervalHours: row.intervalHours,
        startHour: row.startHour,
        endHour: row.endHour,
        timezone: row.timezone,
      };
    },

    async putQueueSettings(accountId: string, settings: TQueueSettings): Promise<TQueueSettings> {
      await db.queueSettings.upsert({
        where: { accountId },
        create: { accountId, ...settings },
        update: settings,
      });
      return settings;
    },

    async listPresets(accountId: string): Promise<TPresetRecord[]> {
      const rows = await db.preset.findMany({
        where: { accountId },
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      });
      return rows.map(toPreset);
    },

    /** Returns null when the account already has a preset of that name. */
    async createPreset(
      accountId: string,
      input: {
        name: string;
        description: string | null;
        platforms: TPlatform[];
        defaults: Record<string, unknown> | null;
      },
    ): Promise<TPresetRecord | null> {
      try {
        const row = await db.preset.create({
          data: {
            accountId,
            name: input.name,
            description: input.description,
            platforms: input.platforms,
            defaults: input.defaults === null ? Prisma.DbNull : (input.defaults as Prisma.InputJsonValue),
          },
        });
        return toPreset(row);
      } catch (error) {
        if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002') return null;
        throw error;
      }
    },
  };
}

export type TSettingsRepository = ReturnType<typeof createSettingsRepository>;
