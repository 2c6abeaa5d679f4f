import type { TPostRecord } from '@sps/core';
import { enqueueQueuePlan, enqueueSchedule, removeSchedule, type TQueues } from '@sps/queue';
import type { Logger } from 'pino';

/**
 * Keeps Redis jobs in step with a post's schedule and queue state after it was saved. Best effort:
 * PostgreSQL already holds the truth and the publisher's reconciler rebuilds any job lost here.
 */
export function createPostJobs(queues: TQueues, logger: Logger) {
  async function safely(what: string, postId: string, run: () => Promise<unknown>) {
    try {
      await run();
    } catch (err) {
      logger.warn(
        { err: (err as Error).message, postId, what },
        'job sync failed; the reconciler will repair it',
      );
    }
  }

  return {
    async afterSave(before: TPostRecord | null, after: TPostRecord): Promise<void> {
      const oldDue = before?.status === 'scheduled' ? before.scheduledFor : null;
      const newDue = after.status === 'scheduled' ? after.scheduledFor : null;
      if (oldDue && oldDue.getTime() !== newDue?.getTime()) {
        await safely('remove schedule', after.id, () => removeSchedule(queues, after.id, oldDue));
      }
      if (newDue && oldDue?.getTime() !== newDue.getTime()) {
        await safely('schedule', after.id, () => enqueueSchedule(queues, after.id, newDue));
      }
      if ((before?.queueState === 'queued') !== (after.queueState === 'queued')) {
        await safely('queue plan', after.id, () => enqueueQueuePlan(queues, after.accountId));
      }
    },

    async afterDelete(before: TPostRecord): Promise<void> {
      if (before.status === 'scheduled' && before.scheduledFor) {
        const due = before.scheduledFor;
        await safely('remove schedule', before.id, () => removeSchedule(queues, before.id, due));
      }
      if (before.queueState === 'queued')
        await safely('queue plan', before.id, () => enqueueQueuePlan(queues, before.accountId));
    },

    async queueChanged(accountId: string): Promise<void> {
      await safely('queue plan', accountId, () => enqueueQueuePlan(queues, accountId));
    },
  };
}

export type TPostJobs = ReturnType<typeof createPostJobs>;
