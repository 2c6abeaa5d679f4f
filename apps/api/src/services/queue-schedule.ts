import { nextQueueSlots, planQueue } from '@sps/core';
import type { TAccountService } from './account-service.js';
import type { TPostService } from './post-service.js';

/** How many upcoming free slots the schedule lists. */
const NEXT_FREE_SLOTS = 5;
/** Queued posts listed with their expected slot (the oldest first); the rest are counted. */
const LISTED_QUEUED = 100;
/** Past this many queued posts the next free slots are not computed (years away; linear work per post). */
const PLANNED_QUEUE_MAX = 5000;

/**
 * The interval queue as an owner sees it (MCP's `queue://schedule`, the dashboard's queue page): the settings,
 * the slot each queued post expects (oldest first), and the next free slots a newly queued post would take.
 */
export async function queueSchedule(
  deps: { accounts: TAccountService; posts: TPostService },
  accountId: string,
) {
  const settings = await deps.accounts.getQueueSettings(accountId);
  const { posts: queued, total } = await deps.posts.listPage(accountId, {
    queueState: 'queued',
    limit: LISTED_QUEUED,
    offset: 0,
    order: 'oldestQueued',
  });
  const now = new Date();
  // The oldest posts take the first slots whatever follows them, so the listed ones plan alone.
  const plan = planQueue(
    settings,
    now,
    queued.map((p) => p.id),
  );
  // The slots after every queued post's: where the next queue_status "queued" posts would land.
  const free =
    total > PLANNED_QUEUE_MAX ? [] : nextQueueSlots(settings, now, total + NEXT_FREE_SLOTS).slice(total);
  return {
    settings,
    queued: plan.map((slot) => ({
      post_id: slot.postId,
      expected_slot: slot.slot.toISOString(),
      content: queued.find((p) => p.id === slot.postId)?.content.slice(0, 80) ?? '',
    })),
    next_free_slots: free.map((slot) => slot.toISOString()),
    queued_total: total,
    waiting_without_slot: settings.enabled ? 0 : total,
  };
}
