import { nextQueueSlots, planQueue } from '@sps/core';
import type { TAccountService } from './account-service.js';
import type { TPostService } from './post-service.js';

/** How many upcoming free slots the schedule lists. */
const NEXT_FREE_SLOTS = 5;

/**
 * The interval queue as an owner sees it (MCP's `queue://schedule`, the dashboard's queue page): the settings,
 * the slot each queued post expects (oldest first), and the next free slots a newly queued post would take.
 */
export async function queueSchedule(
  deps: { accounts: TAccountService; posts: TPostService },
  accountId: string,
) {
  const settings = await deps.accounts.getQueueSettings(accountId);
  const queued = (await deps.posts.listAll(accountId, 'queued')).sort(
    (a, b) => (a.queuedAt?.getTime() ?? 0) - (b.queuedAt?.getTime() ?? 0),
  );
  const now = new Date();
  const plan = planQueue(
    settings,
    now,
    queued.map((p) => p.id),
  );
  // The slots after the queued posts' ones: where the next queue_status "queued" posts would land.
  const free = nextQueueSlots(settings, now, queued.length + NEXT_FREE_SLOTS).slice(queued.length);
  return {
    settings,
    queued: plan.map((slot) => ({
      post_id: slot.postId,
      expected_slot: slot.slot.toISOString(),
      content: queued.find((p) => p.id === slot.postId)?.content.slice(0, 80) ?? '',
    })),
    next_free_slots: free.map((slot) => slot.toISOString()),
    waiting_without_slot: settings.enabled ? 0 : queued.length,
  };
}
