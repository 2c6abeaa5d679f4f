import { z } from 'zod';
import { validationError } from './app-error.js';
import { zodIssues } from './zod-issues.js';

// Variant B webhooks: request parsing and the response shapes (webhook object, delivery history).
// The schemas are exported so the MCP tools validate with the very ones the REST routes parse with.

/** The five event types; the outbox (`recordEvent` in @sps/db) records exactly these. */
/**
 * Webhooks one account may have (active or not). Each is a fan-out of every event to a receiver the
 * worker must call, so the number is bounded; 25 covers a receiver per event type per environment.
 */
export const MAX_WEBHOOKS_PER_ACCOUNT = 25;

export const WEBHOOK_EVENT_TYPES = [
  'post.published',
  'post.failed',
  'post.scheduled',
  'account.connected',
  'account.disconnected',
] as const;
export type TWebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

const ZWebhookUrl = z
  .string({ error: 'must be a string' })
  .max(2048, { error: 'must be at most 2048 characters' })
  .superRefine((value, ctx) => {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be an absolute https:// URL' });
      return;
    }
    if (url.protocol !== 'https:') ctx.addIssue({ code: 'custom', message: 'must use HTTPS (https://)' });
    else if (url.username || url.password)
      ctx.addIssue({ code: 'custom', message: 'must not contain credentials' });
  });

const ZEvents = z
  .array(z.enum(WEBHOOK_EVENT_TYPES, { error: `must be one of ${WEBHOOK_EVENT_TYPES.join(', ')}` }), {
    error: 'must be an array of event types',
  })
  .min(1, { error: 'must list at least one event type' })
  .max(100, { error: 'must have at most 100 event types' })
  .transform((list) => [...new Set(list)]);

export const ZCreateWebhookB = z.strictObject(
  { url: ZWebhookUrl, events: ZEvents },
  { error: 'must be a JSON object' },
);

export const ZUpdateWebhookB = z.strictObject(
  {
    url: ZWebhookUrl.optional(),
    events: ZEvents.optional(),
    is_active: z.boolean({ error: 'must be true or false' }).optional(),
  },
  { error: 'must be a JSON object' },
);

export const ZDeliveryPage = z.object({
  limit: z.coerce
    .number({ error: 'must be a number' })
    .int({ error: 'must be an integer' })
    .min(1)
    .max(100)
    .default(20),
  offset: z.coerce
    .number({ error: 'must be a number' })
    .int({ error: 'must be an integer' })
    .min(0)
    .default(0),
});

export type TCreateWebhookInput = z.output<typeof ZCreateWebhookB>;
export type TUpdateWebhookInput = { url?: string; events?: TWebhookEventType[]; isActive?: boolean };
export type TDeliveryPage = z.output<typeof ZDeliveryPage>;

function parse<T extends z.ZodType>(schema: T, input: unknown): z.output<T> {
  const result = schema.safeParse(input);
  if (!result.success) throw validationError(zodIssues(result.error));
  return result.data;
}

export function parseCreateWebhookB(body: unknown): TCreateWebhookInput {
  return parse(ZCreateWebhookB, body);
}

export function parseUpdateWebhookB(body: unknown): TUpdateWebhookInput {
  const input = parse(ZUpdateWebhookB, body);
  return {
    ...(input.url !== undefined ? { url: input.url } : {}),
    ...(input.events !== undefined ? { events: input.events } : {}),
    ...(input.is_active !== undefined ? { isActive: input.is_active } : {}),
  };
}

export function parseDeliveryPage(query: unknown): TDeliveryPage {
  return parse(ZDeliveryPage, query);
}

export interface TWebhookRecord {
  id: string;
  accountId: string;
  url: string;
  events: string[];
  isActive: boolean;
  consecutiveFailures: number;
  deactivatedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** The webhook object without `secret` (only the create response adds it, once). */
export function presentWebhookB(webhook: TWebhookRecord) {
  return {
    id: webhook.id,
    url: webhook.url,
    events: webhook.events,
    is_active: webhook.isActive,
    created_at: webhook.createdAt.toISOString(),
    updated_at: webhook.updatedAt.toISOString(),
  };
}

export interface TDeliveryRecord {
  id: string;
  webhookId: string;
  eventId: string;
  eventType: string;
  status: 'pending' | 'retrying' | 'succeeded' | 'failed';
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  nextAttemptAt: Date | null;
  lastAttemptAt: Date | null;
  deliveredAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export function presentDeliveryB(delivery: TDeliveryRecord) {
  const iso = (d: Date | null) => (d ? d.toISOString() : null);
  return {
    id: delivery.id,
    event_id: delivery.eventId,
    event_type: delivery.eventType,
    status: delivery.status,
    attempts: delivery.attempts,
    last_status_code: delivery.lastStatusCode,
    last_error: delivery.lastError,
    next_attempt_at: iso(delivery.nextAttemptAt),
    last_attempt_at: iso(delivery.lastAttemptAt),
    delivered_at: iso(delivery.deliveredAt),
    created_at: delivery.createdAt.toISOString(),
    updated_at: delivery.updatedAt.toISOString(),
  };
}

// Response schemas (OpenAPI): the shapes the presenters above return, checked against them at compile time
// (`events` and `event_type` are stored as strings, always one of WEBHOOK_EVENT_TYPES) and against real
// responses in apps/api/test/openapi.test.ts.

export const ZWebhookViewB = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(z.enum(WEBHOOK_EVENT_TYPES)),
  is_active: z.boolean(),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
});
presentWebhookB satisfies (
  webhook: TWebhookRecord,
) => Omit<z.output<typeof ZWebhookViewB>, 'events'> & { events: string[] };

/** The create response: the webhook plus its signing `secret`, returned this once. */
export const ZWebhookCreatedB = ZWebhookViewB.extend({
  secret: z.string().meta({ description: 'The signing secret; returned only in this response.' }),
});

export const ZDeliveryViewB = z.object({
  id: z.string(),
  event_id: z.string(),
  event_type: z.enum(WEBHOOK_EVENT_TYPES),
  status: z.enum(['pending', 'retrying', 'succeeded', 'failed']),
  attempts: z.int(),
  last_status_code: z.int().nullable(),
  last_error: z.string().nullable(),
  next_attempt_at: z.iso.datetime().nullable(),
  last_attempt_at: z.iso.datetime().nullable(),
  delivered_at: z.iso.datetime().nullable(),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
});
presentDeliveryB satisfies (
  delivery: TDeliveryRecord,
) => Omit<z.output<typeof ZDeliveryViewB>, 'event_type'> & { event_type: string };
