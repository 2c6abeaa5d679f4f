import type { TWebhookEventType } from '@sps/core';
import type { TTx } from './client.js';

/** What the outbox records: the webhook event types. */
export type TEventType = TWebhookEventType;

/**
 * Writes an outbox row inside the caller's transaction, so an event exists exactly when the state
 * change that caused it committed.
 */
export async function recordEvent(
  tx: TTx,
  event: { accountId: string; type: TEventType; data: Record<string, unknown> },
): Promise<string> {
  const row = await tx.event.create({
    data: { accountId: event.accountId, type: event.type, data: event.data as object },
    select: { id: true },
  });
  return row.id;
}
