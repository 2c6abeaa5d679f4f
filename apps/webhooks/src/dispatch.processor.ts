import { enqueueWebhookDeliveries, enqueueWebhookDelivery, type TDeliveryRef } from '@sps/queue';
import type { TWebhooksContext } from './context.js';

const BATCH = 200;
const MAX_BATCHES = 25;
const RECONCILE_LIMIT = 2000;

function enqueueAll(ctx: TWebhooksContext, refs: TDeliveryRef[]) {
  const attempts = ctx.options.retryDelaysMs.length + 1;
  return enqueueWebhookDeliveries(ctx.queues, refs, { attempts });
}

/**
 * The outbox dispatcher: undispatched events, oldest first, become one delivery row per subscribed
 * active webhook plus a delivery job each. Safe in several processes at once (row locks with SKIP
 * LOCKED, a unique (event, webhook) pair, deterministic job ids). If enqueueing fails after the commit,
 * the deliveries stay `pending` and the reconciler enqueues them.
 */
export async function dispatchEvents(ctx: TWebhooksContext): Promise<{ events: number; deliveries: number }> {
  let events = 0;
  let deliveries = 0;
  for (let i = 0; i < MAX_BATCHES; i += 1) {
    const batch = await ctx.deliveries.dispatchBatch(BATCH);
    events += batch.events;
    deliveries += batch.deliveries.length;
    if (batch.deliveries.length > 0) {
      await enqueueAll(ctx, batch.deliveries).catch((err: Error) =>
        ctx.logger.warn(
          { err: err.message, deliveries: batch.deliveries.length },
          'enqueue failed; the reconciler retries',
        ),
      );
    }
    if (batch.events < BATCH) break;
  }
  return { events, deliveries };
}

/**
 * Rebuilds Redis from PostgreSQL: every open (pending or retrying) delivery gets its job back, due at
 * its `next_attempt_at`. A job that exists and is still waiting, delayed or active is left alone; a
 * finished job whose delivery the database still holds open is replaced. Flushing Redis loses nothing.
 */
export async function reconcileDeliveries(ctx: TWebhooksContext): Promise<{ requeued: number }> {
  const now = Date.now();
  let requeued = 0;
  const attempts = ctx.options.retryDelaysMs.length + 1;
  for (const open of await ctx.deliveries.openDeliveries(RECONCILE_LIMIT)) {
    try {
      const { added } = await enqueueWebhookDelivery(
        ctx.queues,
        { deliveryId: open.id, eventId: open.eventId, webhookId: open.webhookId },
        {
          replaceFinished: true,
          attempts,
          delayMs: open.nextAttemptAt ? open.nextAttemptAt.getTime() - now : 0,
        },
      );
      if (added) requeued += 1;
    } catch (err) {
      ctx.logger.warn(
        { deliveryId: open.id, err: (err as Error).message },
        'could not re-enqueue a delivery',
      );
    }
  }
  return { requeued };
}
