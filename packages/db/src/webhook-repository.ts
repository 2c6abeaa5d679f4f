import {
  type TDeliveryPage,
  type TDeliveryRecord,
  type TUpdateWebhookInput,
  type TWebhookRecord,
  UUID_PATTERN,
} from '@sps/core';
import type { TDb } from './client.js';
import type { WebhookModel } from './generated/prisma/models/Webhook.js';
import { type TIdempotencyWrite, writeIdempotencyInTx } from './idempotency-repository.js';

// Webhooks of an account (Variant B API, admin CLI). Every lookup is scoped by account: another
// account's id is simply not found.

function toRecord(row: WebhookModel): TWebhookRecord {
  return {
    id: row.id,
    accountId: row.accountId,
    url: row.url,
    events: row.events,
    isActive: row.isActive,
    consecutiveFailures: row.consecutiveFailures,
    deactivatedAt: row.deactivatedAt,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

const DELIVERY_INCLUDE = { event: { select: { type: true } } } as const;

function toDelivery(row: Omit<TDeliveryRecord, 'eventType'> & { event: { type: string } }): TDeliveryRecord {
  const { event, ...rest } = row;
  return { ...rest, eventType: event.type };
}

export type TRetryOutcome =
  | { kind: 'not_found' }
  | { kind: 'not_failed'; status: TDeliveryRecord['status'] }
  | { kind: 'webhook_inactive' }
  | { kind: 'reset'; delivery: TDeliveryRecord };

export function createWebhookRepository(db: TDb) {
  const find = async (accountId: string, id: string) =>
    UUID_PATTERN.test(id) ? db.webhook.findFirst({ where: { id, accountId } }) : null;

  return {
    /**
     * Creates the webhook unless the account already has `max`: the account row is locked for the count,
     * so concurrent creates cannot pass the limit together.
     */
    async create(
      input: { id?: string; accountId: string; url: string; events: string[]; secretEncrypted: string },
      max = Number.POSITIVE_INFINITY,
      /** With an Idempotency-Key: its record (with the answer, built from the webhook), in the same transaction. */
      idempotency?: (webhook: TWebhookRecord) => TIdempotencyWrite,
    ): Promise<TWebhookRecord | { limit: number }> {
      return db.$transaction(async (tx) => {
        await tx.$queryRaw`SELECT id FROM accounts WHERE id = ${input.accountId}::uuid FOR UPDATE`;
        if (
          Number.isFinite(max) &&
          (await tx.webhook.count({ where: { accountId: input.accountId } })) >= max
        ) {
          return { limit: max };
        }
        const webhook = toRecord(await tx.webhook.create({ data: input }));
        if (idempotency) await writeIdempotencyInTx(tx, idempotency(webhook), webhook.id);
        return webhook;
      });
    },

    async list(accountId: string): Promise<TWebhookRecord[]> {
      const rows = await db.webhook.findMany({
        where: { accountId },
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      });
      return rows.map(toRecord);
    },

    async get(accountId: string, id: string): Promise<TWebhookRecord | null> {
      const row = await find(accountId, id);
      return row ? toRecord(row) : null;
    },

    /** Re-activating (false → true) starts the failure count afresh. */
    async update(accountId: string, id: string, change: TUpdateWebhookInput): Promise<TWebhookRecord | null> {
      return db.$transaction(async (tx) => {
        const rows = await tx.$queryRaw<{ is_active: boolean }[]>`
          SELECT is_active FROM webhooks WHERE id = ${id}::uuid AND account_id = ${accountId}::uuid FOR UPDATE`;
        const current = rows[0];
        if (!current) return null;
        const reactivate = change.isActive === true && !current.is_active;
        const row = await tx.webhook.update({
          where: { id },
          data: {
            ...(change.url !== undefined ? { url: change.url } : {}),
            ...(change.events !== undefined ? { events: change.events } : {}),
            ...(change.isActive !== undefined ? { isActive: change.isActive } : {}),
            ...(reactivate ? { consecutiveFailures: 0, deactivatedAt: null } : {}),
          },
        });
        return toRecord(row);
      });
    },

    async remove(accountId: string, id: string): Promise<boolean> {
      if (!UUID_PATTERN.test(id)) return false;
      const { count } = await db.webhook.deleteMany({ where: { id, accountId } });
      return count > 0;
    },

    /** Newest first; null when the webhook is not this account's. */
    async listDeliveries(accountId: string, webhookId: string, page: TDeliveryPage) {
      if (!(await find(accountId, webhookId))) return null;
      const [rows, total] = await Promise.all([
        db.webhookDelivery.findMany({
          where: { webhookId },
          include: DELIVERY_INCLUDE,
          orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
          take: page.limit,
          skip: page.offset,
        }),
        db.webhookDelivery.count({ where: { webhookId } }),
      ]);
      return { deliveries: rows.map(toDelivery), total };
    },

    /** Manual retry: only a `failed` delivery of an active webhook starts over (attempts back to 0). */
    async resetFailedDelivery(
      accountId: string,
      webhookId: string,
      deliveryId: string,
    ): Promise<TRetryOutcome> {
      if (!UUID_PATTERN.test(deliveryId)) return { kind: 'not_found' };
      return db.$transaction(async (tx) => {
        const webhook = await tx.webhook.findFirst({ where: { id: webhookId, accountId } });
        if (!webhook) return { kind: 'not_found' } as const;
        const locked = await tx.$queryRaw<{ status: TDeliveryRecord['status'] }[]>`
          SELECT status FROM webhook_deliveries WHERE id = ${deliveryId}::uuid AND webhook_id = ${webhookId}::uuid FOR UPDATE`;
        const status = locked[0]?.status;
        if (!status) return { kind: 'not_found' } as const;
        if (status !== 'failed') return { kind: 'not_failed', status } as const;
        if (!webhook.isActive) return { kind: 'webhook_inactive' } as const;
        const row = await tx.webhookDelivery.update({
          where: { id: deliveryId },
          data: {
            status: 'pending',
            attempts: 0,
            nextAttemptAt: new Date(),
            lastError: null,
            lastStatusCode: null,
          },
          include: DELIVERY_INCLUDE,
        });
        return { kind: 'reset', delivery: toDelivery(row) } as const;
      });
    },

    /** One delivery of the account, by id (admin CLI). */
    async findDelivery(accountId: string, deliveryId: string) {
      if (!UUID_PATTERN.test(deliveryId)) return null;
      const row = await db.webhookDelivery.findFirst({
        where: { id: deliveryId, webhook: { accountId } },
        include: DELIVERY_INCLUDE,
      });
      return row ? toDelivery(row) : null;
    },
  };
}

export type TWebhookRepository = ReturnType<typeof createWebhookRepository>;
