import { type TPlatform, type TQueueSettings, VARIANT_A_PLATFORMS } from '@sps/core';
import type { TSettingsRepository, TSocialAccountRepository } from '@sps/db';
import type { TPostJobs } from './post-jobs.js';

export function createAccountService(deps: {
  socialAccounts: TSocialAccountRepository;
  settings: TSettingsRepository;
  jobs: TPostJobs;
}) {
  return {
    /**
     * Variant A lists its five networks: active accounts and ones whose token expired (shown with
     * `needsReauth`); accounts disconnected on purpose are gone from its view.
     */
    async listForA(accountId: string) {
      const all = await deps.socialAccounts.list(accountId, {
        platforms: VARIANT_A_PLATFORMS as readonly TPlatform[],
        includeInactive: true,
      });
      return all.filter((a) => a.isActive || a.needsReauth);
    },

    /** Variant B lists every connection with `is_active`. */
    listForB(accountId: string) {
      return deps.socialAccounts.list(accountId, { includeInactive: true });
    },

    getQueueSettings(accountId: string): Promise<TQueueSettings> {
      return deps.settings.getQueueSettings(accountId);
    },

    /** Changing the settings re-plans the next slot (or holds the queue when disabled). */
    async putQueueSettings(accountId: string, settings: TQueueSettings): Promise<TQueueSettings> {
      const saved = await deps.settings.putQueueSettings(accountId, settings);
      await deps.jobs.queueChanged(accountId);
      return saved;
    },
  };
}

export type TAccountService = ReturnType<typeof createAccountService>;
