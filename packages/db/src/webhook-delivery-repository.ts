import { UUID_PATTERN } from '@sps/core';
import { batchLoader } from './batch.js';
import { sqlOf, type TDb } from './client.js';

// The webhooks worker's side of the outbox: dispatching events to delivery rows and recording attempts.

export interface TDispatchedDelivery {
  deliveryId: string;
  eventId: string;
  webhookId: string;
}

export interface TAttemptResult {
  statusCode: number | null;
  error: string | null;
}

export interface TDeactivation {
  webhookId: string;
  accountId: string;
  url: string;
  ownerEmail: string;
  consecutiveFailures: number;
}

interface TAttemptRow {
  id: string;
  webhook_id: string;
  event_id: string;
  status: 'pending' | 'retrying' | 'succeeded' | 'failed';
  attempts: number;
  account_id: string;
  url: string;
  secret_encrypted: string;
  is_active: boolean;
  type: string;
  data: unknown;
  created_at: Date;
}

export interface TAttemptInput {
  id: string;
  webhookId: string;
  eventId: string;
  status: TAttemptRow['status'];
  attempts: number;
  webhook: { id: string; accountId: string; url: string; secretEncrypted: string; isActive: boolean };
  event: { id: string; type: string; data: unknown; createdAt: Date };
}

const OPEN = { in: ['pending', 'retrying'] as ('pending' | 'retrying')[] };

// Deliveries run with high concurrency and each needs one read before and one write after its POST: both
// are batched across the deliveries in flight (see batchLoader).

interface TSuccess {
  deliveryId: string;
  webhookId: string;
  statusCode: number;
}

export function createWebhookDeliveryRepository(db: TDb) {
  const loads = batchLoader<string, TAttemptRow | null>(async (ids) => {
    const { rows } = await sqlOf(db).query<TAttemptRow>({
      name: 'delivery_load',
      text: `SELECT d.id, d.webhook_id, d.event_id, d.status::text AS status, d.attempts,
                    w.account_id, w.url, w.secret_encrypted, w.is_active, e.type, e.data, e.created_at
             FROM webhook_deliveries d
             JOIN webhooks w ON w.id = d.webhook_id
             JOIN events e ON e.id = d.event_id
             WHERE d.id = ANY ($1::uuid[])`,
      values: [ids],
    });
    const byId = new Map(rows.map((row) => [row.id, row]));
    return ids.map((id) => byId.get(id) ?? null);
  });

  const successes = batchLoader<TSuccess, boolean>(
    async (batch) => {
      // Only open deliveries become succeeded (a delivery twice in one batch: the later round gets false).
      // The webhooks to reset are locked in id order, so two workers' batches never wait on each other in a cycle.
      const { rows } = await sqlOf(db).query<{ id: string }>({
        name: 'delivery_succeeded',
        text: `WITH input AS (
               SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::int[]) AS i(delivery_id, webhook_id, status_code)
             ), done AS (
               UPDATE webhook_deliveries d
               SET status = 'succeeded', attempts = d.attempts + 1, last_status_code = i.status_code,
                   last_error = NULL, next_attempt_at = NULL, last_attempt_at = now(), delivered_at = now(),
                   updated_at = now()
               FROM input i
               WHERE d.id = i.delivery_id AND d.status IN ('pending', 'retrying')
               RETURNING d.id
             ), hooks AS (
               SELECT id FROM webhooks
               WHERE id IN (SELECT webhook_id FROM input) AND consecutive_failures > 0
               ORDER BY id FOR UPDATE
             ), reset AS (
               UPDATE webhooks SET consecutive_failures = 0, updated_at = now()
               WHERE id IN (SELECT id FROM hooks)
               RETURNING id
             )
             SELECT id FROM done`,
        values: [
          batch.map((s) => s.deliveryId),
          batch.map((s) => s.webhookId),
          batch.map((s) => s.statusCode),
        ],
      });
      const done = new Set(rows.map((row) => row.id));
      return batch.map((s) => done.has(s.deliveryId));
    },
    (success) => success.deliveryId,
  );

  return {
    /**
     * Takes up to `limit` undispatched events, oldest first (`FOR UPDATE SKIP LOCKED`, so several
     * dispatchers share the work without waiting on each other), writes one delivery per active
     * webhook of the account subscribed to the type (created no later than the event), and marks the
     * events dispatched, all in one transaction. Returns the new deliveries; the caller enqueues them.
     */
    async dispatchBatch(limit: number): Promise<{ events: number; deliveries: TDispatchedDelivery[] }> {
      return db.$transaction(async (tx) => {
        const events = await tx.$queryRaw<{ id: string }[]>`
          SELECT id FROM events WHERE dispatched_at IS NULL
          ORDER BY created_at, id LIMIT ${limit} FOR UPDATE SKIP LOCKED`;
        if (events.length === 0) return { events: 0, deliveries: [] };
        const ids = events.map((e) => e.id);
        const rows = await tx.$queryRaw<{ id: string; event_id: string; webhook_id: string }[]>`
          INSERT INTO webhook_deliveries (id, webhook_id, event_id, status, attempts, next_attempt_at, created_at, updated_at)
          SELECT gen_random_uuid(), w.id, e.id, 'pending', 0, now(), now(), now()
          FROM events e
          JOIN webhooks w ON w.account_id = e.account_id AND w.is_active AND e.type = ANY (w.events)
                          AND w.created_at <= e.created_at
          WHERE e.id = ANY (${ids}::uuid[])
          ORDER BY e.created_at, e.id
          ON CONFLICT (event_id, webhook_id) DO NOTHING
          RETURNING id, event_id, webhook_id`;
        await tx.$executeRaw`UPDATE events SET dispatched_at = now() WHERE id = ANY (${ids}::uuid[])`;
        return {
          events: ids.length,
          deliveries: rows.map((r) => ({ deliveryId: r.id, eventId: r.event_id, webhookId: r.webhook_id })),
        };
      });
    },

    /** Everything one attempt needs, re-read from PostgreSQL (the job carries the delivery id only). */
    async loadForAttempt(deliveryId: string): Promise<TAttemptInput | null> {
      if (!UUID_PATTERN.test(deliveryId)) return null;
      const row = await loads.load(deliveryId.toLowerCase());
      if (!row) return null;
      return {
        id: row.id,
        webhookId: row.webhook_id,
        eventId: row.event_id,
        status: row.status,
        attempts: row.attempts,
        webhook: {
          id: row.webhook_id,
          accountId: row.account_id,
          url: row.url,
          secretEncrypted: row.secret_encrypted,
          isActive: row.is_active,
        },
        event: { id: row.event_id, type: row.type, data: row.data, createdAt: row.created_at },
      };
    },

    /** A 2xx: the delivery is done and the webhook's consecutive-failure count starts over. */
    recordSuccess(deliveryId: string, webhookId: string, statusCode: number): Promise<boolean> {
      return successes.load({ deliveryId: deliveryId.toLowerCase(), webhookId, statusCode });
    },

    /** A failed attempt with retries left. */
    async recordRetry(deliveryId: string, result: TAttemptResult, nextAttemptAt: Date): Promise<boolean> {
      const { count } = await db.webhookDelivery.updateMany({
        where: { id: deliveryId, status: OPEN },
        data: {
          status: 'retrying',
          attempts: { increment: 1 },
          lastStatusCode: result.statusCode,
          lastError: result.error,
          lastAttemptAt: new Date(),
          nextAttemptAt,
        },
      });
      return count > 0;
    },

    /**
     * The last attempt failed: the delivery is `failed` and counts toward the webhook's consecutive
     * failed deliveries. Reaching `threshold` deactivates the webhook; exactly one caller gets the
     * deactivation back (to e-mail the owner).
     */
    async recordFailure(
      deliveryId: string,
      webhookId: string,
      result: TAttemptResult,
      options: { threshold: number; countsTowardDeactivation: boolean; incrementAttempts?: boolean },
    ): Promise<{ recorded: boolean; deactivation: TDeactivation | null }> {
      return db.$transaction(async (tx) => {
        const { count } = await tx.webhookDelivery.updateMany({
          where: { id: deliveryId, status: OPEN },
          data: {
            status: 'failed',
            ...(options.incrementAttempts === false ? {} : { attempts: { increment: 1 } }),
            lastStatusCode: result.statusCode,
            lastError: result.error,
            lastAttemptAt: new Date(),
            nextAttemptAt: null,
          },
        });
        if (count === 0 || !options.countsTowardDeactivation)
          return { recorded: count > 0, deactivation: null };
        const counted = await tx.$queryRaw<{ consecutive_failures: number }[]>`
          UPDATE webhooks SET consecutive_failures = consecutive_failures + 1, updated_at = now()
          WHERE id = ${webhookId}::uuid RETURNING consecutive_failures`;
        const failures = counted[0]?.consecutive_failures ?? 0;
        if (failures < options.threshold) return { recorded: true, deactivation: null };
        const off = await tx.$queryRaw<{ account_id: string; url: string }[]>`
          UPDATE webhooks SET is_active = false, deactivated_at = now(), updated_at = now()
          WHERE id = ${webhookId}::uuid AND is_active RETURNING account_id, url`;
        const row = off[0];
        if (!row) return { recorded: true, deactivation: null };
        const account = await tx.account.findUnique({
          where: { id: row.account_id },
          select: { ownerEmail: true },
        });
        return {
          recorded: true,
          deactivation: {
            webhookId,
            accountId: row.account_id,
            url: row.url,
            ownerEmail: account?.ownerEmail ?? '',
            consecutiveFailures: failures,
          },
        };
      });
    },

    /** Open deliveries, least recently touched first, for the reconciler to check against Redis. */
    async openDeliveries(limit: number) {
      return db.webhookDelivery.findMany({
        where: { status: OPEN },
        select: { id: true, eventId: true, webhookId: true, nextAttemptAt: true },
        orderBy: [{ updatedAt: 'asc' }, { id: 'asc' }],
        take: limit,
      });
    },
  };
}

export type TWebhookDeliveryRepository = ReturnType<typeof createWebhookDeliveryRepository>;
