import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  AppError,
  parseCreateWebhookB,
  parseDeliveryPage,
  parseUpdateWebhookB,
  WEBHOOK_EVENT_TYPES,
  ZCreateWebhookB,
  ZDeliveryPage,
  ZUpdateWebhookB,
} from '@sps/core';
import { z } from 'zod';
import type { TAuth } from '../http/auth.js';
import type { TIdempotent } from '../http/idempotency.js';
import type { TWebhookService } from '../services/webhook-service.js';
import { idempotentTool, ZIdempotencyKeyArg } from './idempotent-tool.js';
import { asJson, ok, run } from './tool-result.js';

export interface TWebhookToolDeps {
  auth: TAuth;
  webhooks: TWebhookService;
  idempotent: TIdempotent;
}

// The descriptions are the agent's only documentation: they state what each field means and every rule
// the service enforces, so an agent can get a call right the first time.

const URL_RULES =
  'An absolute https:// URL (HTTPS only; http:// is refused), at most 2048 characters, without user:password. A host that is or resolves to a loopback, private, link-local, CGNAT or cloud-metadata address (127.0.0.1, 10.x, 192.168.x, 169.254.169.254, localhost, ...) is refused to prevent SSRF, here and again at every delivery.';
const EVENT_RULES = `The event types to receive, at least one of the five: ${WEBHOOK_EVENT_TYPES.join(', ')}. post.published: published to at least one network; post.failed: failed on every network; post.scheduled: scheduled for later; account.connected / account.disconnected: a social account was connected, or disconnected or its token expired. Duplicates are ignored.`;
const DELIVERY =
  'Each event is POSTed as JSON {id, type, created_at, data} and must be answered 2xx within 30 seconds; a failure is retried after 1 min, 5 min, 30 min, 2 h and 12 h, then the delivery is failed. After 10 consecutive failed deliveries the webhook is deactivated (is_active false) and the owner is e-mailed.';

const ZWebhookId = z.string().describe('The webhook id returned by create_webhook or list_webhooks.');

/**
 * Gives the service's errors an agent's fix: its SSRF refusal has none (REST B bodies carry no fix), and
 * its inactive-webhook fix names the REST call where an agent uses update_webhook.
 */
function agentFix(error: unknown): never {
  if (!(error instanceof AppError)) throw error;
  let fix: string | undefined;
  if (error.code === 'validation_error' && error.issues.some((i) => i.field === 'url'))
    fix =
      'Use a publicly reachable https:// endpoint whose host resolves to public addresses only (not localhost, a private network or a metadata address).';
  else if (error.fix?.includes('PUT /v1/webhooks'))
    fix = 'Re-activate it with update_webhook {"id": ..., "is_active": true}, then retry the delivery.';
  if (!fix) throw error;
  throw new AppError(error.code, error.message, { fix, issues: error.issues, details: error.details });
}

/** Runs a tool body with `agentFix`; the body is async so a parser's synchronous throw is caught too. */
const fixed = (body: () => Promise<unknown>) => run(() => body().catch(agentFix));

export function registerWebhookTools(server: McpServer, deps: TWebhookToolDeps): void {
  const { webhooks, idempotent } = deps;
  const { accountId } = deps.auth;

  server.registerTool(
    'list_webhooks',
    {
      title: 'List webhooks',
      description:
        'The webhooks of this account, oldest first: id, url, events, is_active (false once deactivated after repeated failures or by update_webhook), created_at, updated_at. The secret is never shown again.',
      annotations: { readOnlyHint: true },
    },
    () => run(async () => ({ webhooks: await webhooks.list(accountId) })),
  );

  server.registerTool(
    'create_webhook',
    {
      title: 'Create a webhook',
      description: `Registers an HTTPS endpoint that receives this account's events. The answer includes "secret" (whsec_...) ONLY this once: store it. Every delivery is signed with it: X-Service-Signature is the hex HMAC-SHA256 of the raw body keyed with the secret; the Standard Webhooks headers webhook-id, webhook-timestamp and webhook-signature are sent too. ${DELIVERY}`,
      inputSchema: {
        url: ZCreateWebhookB.shape.url.describe(URL_RULES),
        events: ZCreateWebhookB.shape.events.describe(EVENT_RULES),
        idempotency_key: ZIdempotencyKeyArg,
      },
    },
    (args) => {
      const json = asJson(args) as Record<string, unknown>;
      const { idempotency_key: _key, ...input } = json;
      // A repeated call (its result lost) gets the first webhook, secret included, not a second webhook.
      return idempotentTool(idempotent, accountId, 'create_webhook', json, (key) =>
        webhooks
          .create(accountId, parseCreateWebhookB(input), (answer) => key.withAnswer(200, ok(answer)))
          .catch(agentFix),
      );
    },
  );

  server.registerTool(
    'get_webhook',
    {
      title: 'Get a webhook',
      description: 'One webhook of this account (without its secret).',
      inputSchema: { id: ZWebhookId },
      annotations: { readOnlyHint: true },
    },
    (args) => run(() => webhooks.get(accountId, args.id)),
  );

  server.registerTool(
    'update_webhook',
    {
      title: 'Update a webhook',
      description:
        'Changes only the given fields: url (same rules as create_webhook), events (replaces the whole list), is_active (false pauses deliveries; true re-activates a webhook that was deactivated after repeated failures and resets its failure count). The secret stays the same.',
      inputSchema: {
        id: ZWebhookId,
        url: ZUpdateWebhookB.shape.url.describe(URL_RULES),
        events: ZUpdateWebhookB.shape.events.describe(EVENT_RULES),
        is_active: ZUpdateWebhookB.shape.is_active.describe('Whether events are delivered.'),
      },
    },
    (args) =>
      fixed(async () => {
        const { id, ...change } = asJson(args) as Record<string, unknown> & { id: string };
        return webhooks.update(accountId, id, parseUpdateWebhookB(change));
      }),
  );

  server.registerTool(
    'delete_webhook',
    {
      title: 'Delete a webhook',
      description:
        'Removes the webhook and its delivery history; no more events are sent to its URL. Cannot be undone.',
      inputSchema: { id: ZWebhookId },
      annotations: { destructiveHint: true },
    },
    (args) =>
      run(async () => {
        await webhooks.remove(accountId, args.id);
        return { deleted: true, id: args.id };
      }),
  );

  server.registerTool(
    'list_webhook_deliveries',
    {
      title: 'List webhook deliveries',
      description:
        'The delivery history of one webhook, newest first, with total for paging: per delivery the event (event_id, event_type), status (pending, retrying, succeeded or failed), attempts, last_status_code, last_error, next_attempt_at, last_attempt_at and delivered_at.',
      inputSchema: {
        id: ZWebhookId,
        limit: ZDeliveryPage.shape.limit.describe('Page size, 1 to 100, default 20.'),
        offset: ZDeliveryPage.shape.offset.describe('Deliveries to skip, default 0.'),
      },
      annotations: { readOnlyHint: true },
    },
    (args) =>
      run(async () => {
        const { id, ...page } = asJson(args) as Record<string, unknown> & { id: string };
        return webhooks.deliveries(accountId, id, parseDeliveryPage(page));
      }),
  );

  server.registerTool(
    'retry_webhook_delivery',
    {
      title: 'Retry a failed delivery',
      description:
        'Sends a delivery whose status is "failed" again, starting over with a fresh series of attempts (status "pending", attempts 0). Only failed deliveries can be retried, and only while the webhook is active.',
      inputSchema: {
        id: ZWebhookId,
        delivery_id: z.string().describe('The delivery id from list_webhook_deliveries.'),
      },
    },
    (args) => fixed(() => webhooks.retry(accountId, args.id, args.delivery_id)),
  );
}
