import type { TTx } from './client.js';

export const EVENT_TYPES = [
  'post.published',
  'post.failed',
  'post.scheduled',
  'account.connected',
  'account.disconnected',
] as const;
export type TEventType = (typeof EVENT_TYPES)[number];

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
