import { randomUUID } from 'node:crypto';
import type pg from 'pg';
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

/** `recordEvent` for plain-SQL transactions (the publish hot path): the same outbox row. */
export async function recordEventSql(
  client: pg.ClientBase,
  event: { accountId: string; type: TEventType; data: Record<string, unknown> },
): Promise<string> {
  const id = randomUUID();
  await client.query({
    name: 'event_insert',
    text: 'INSERT INTO events (id, account_id, type, data) VALUES ($1, $2, $3, $4)',
    values: [id, event.accountId, event.type, JSON.stringify(event.data)],
  });
  return id;
}
