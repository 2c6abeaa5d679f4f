import { randomBytes, randomUUID } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import {
  AppError,
  ipLiteralHost,
  isForbiddenAddress,
  MAX_WEBHOOKS_PER_ACCOUNT,
  presentDeliveryB,
  presentWebhookB,
  secretBox,
  type TCreateWebhookInput,
  type TDeliveryPage,
  type TUpdateWebhookInput,
  type TWebhookRecord,
  validationError,
} from '@sps/core';
import type { TIdempotencyWrite, TWebhookRepository } from '@sps/db';
import { enqueueWebhookDelivery, type TQueues } from '@sps/queue';
import type { Logger } from 'pino';

export interface TWebhookServiceDeps {
  webhooks: TWebhookRepository;
  queues: TQueues;
  logger: Logger;
  encryptionKey: Buffer;
  /** WEBHOOK_ALLOW_PRIVATE_URLS: tests only. */
  allowPrivateUrls: boolean;
  /** Host → addresses; `dns.lookup` by default. */
  resolveHost?: (host: string) => Promise<string[]>;
}

const defaultResolve = async (host: string) =>
  (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

const notFound = () =>
  new AppError('not_found', 'No webhook with this id in this account', { fix: 'Check the webhook id.' });

/** `whsec_` + base64 of 32 random bytes: 256 bits, in the form Standard Webhooks verifiers accept. */
function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** The create answer: the only time the secret leaves the service. */
function createdView(webhook: TWebhookRecord, secret: string) {
  const view = presentWebhookB(webhook);
  return {
    id: view.id,
    url: view.url,
    events: view.events,
    secret,
    is_active: view.is_active,
    created_at: view.created_at,
    updated_at: view.updated_at,
  };
}

export function createWebhookService(deps: TWebhookServiceDeps) {
  const resolveHost = deps.resolveHost ?? defaultResolve;

  /** SSRF guard at creation and update; the worker checks again at every delivery. */
  async function assertPublicUrl(value: string): Promise<void> {
    if (deps.allowPrivateUrls) return;
    const url = new URL(value);
    const literal = ipLiteralHost(url);
    let addresses: string[];
    if (literal) addresses = [literal];
    else {
      try {
        addresses = await resolveHost(url.hostname);
      } catch {
        throw validationError([{ field: 'url', message: `host ${url.hostname} does not resolve` }]);
      }
    }
    if (addresses.length === 0 || addresses.some(isForbiddenAddress)) {
      throw validationError([
        { field: 'url', message: 'must not point at a loopback, private, link-local or metadata address' },
      ]);
    }
  }

  return {
    /** `idempotency` gets the answer and returns the key's record, written in the webhook's transaction. */
    async create(
      accountId: string,
      input: TCreateWebhookInput,
      idempotency?: (answer: ReturnType<typeof createdView>) => TIdempotencyWrite,
    ) {
      await assertPublicUrl(input.url);
      const secret = newSecret();
      // The id is chosen here so the secret is sealed for its own row (it opens nowhere else).
      const id = randomUUID();
      const webhook = await deps.webhooks.create(
        {
          id,
          accountId,
          url: input.url,
          events: input.events,
          secretEncrypted: secretBox.seal(secret, deps.encryptionKey, secretBox.sealContext('webhooks', id)),
        },
        MAX_WEBHOOKS_PER_ACCOUNT,
        idempotency ? (made) => idempotency(createdView(made, secret)) : undefined,
      );
      if ('limit' in webhook) {
        throw new AppError('conflict', `webhooks: an account may have at most ${webhook.limit} webhooks`, {
          issues: [{ field: 'webhooks', message: `at most ${webhook.limit} per account` }],
          fix: 'Delete a webhook you no longer need (DELETE /v1/webhooks/{id}), or subscribe an existing one to more events.',
          details: { limit: webhook.limit },
        });
      }
      return createdView(webhook, secret);
    },

    async list(accountId: string) {
      return (await deps.webhooks.list(accountId)).map(presentWebhookB);
    },

    async get(accountId: string, id: string) {
      const webhook = await deps.webhooks.get(accountId, id);
      if (!webhook) throw notFound();
      return presentWebhookB(webhook);
    },

    async update(accountId: string, id: string, change: TUpdateWebhookInput) {
      if (!(await deps.webhooks.get(accountId, id))) throw notFound();
      if (change.url !== undefined) await assertPublicUrl(change.url);
      const webhook = await deps.webhooks.update(accountId, id, change);
      if (!webhook) throw notFound();
      return presentWebhookB(webhook);
    },

    async remove(accountId: string, id: string) {
      if (!(await deps.webhooks.remove(accountId, id))) throw notFound();
    },

    async deliveries(accountId: string, id: string, page: TDeliveryPage) {
      const result = await deps.webhooks.listDeliveries(accountId, id, page);
      if (!result) throw notFound();
      return { deliveries: result.deliveries.map(presentDeliveryB), total: result.total };
    },

    /** Starts a failed delivery over (attempts from 0) and enqueues it. */
    async retry(accountId: string, webhookId: string, deliveryId: string) {
      const outcome = await deps.webhooks.resetFailedDelivery(accountId, webhookId, deliveryId);
      if (outcome.kind === 'not_found') {
        throw new AppError('not_found', 'No delivery with this id for this webhook', {
          fix: 'Check the ids.',
        });
      }
      if (outcome.kind === 'not_failed') {
        throw new AppError(
          'conflict',
          `Only failed deliveries can be retried; this one is ${outcome.status}`,
          {
            details: { status: outcome.status },
          },
        );
      }
      if (outcome.kind === 'webhook_inactive') {
        throw new AppError('conflict', 'The webhook is not active', {
          fix: 'Re-activate it with PUT /v1/webhooks/{id} {"is_active": true}, then retry.',
        });
      }
      const { delivery } = outcome;
      try {
        await enqueueWebhookDelivery(
          deps.queues,
          { deliveryId: delivery.id, eventId: delivery.eventId, webhookId: delivery.webhookId },
          { replaceFinished: true },
        );
      } catch (err) {
        // The delivery is `pending` in PostgreSQL: the webhooks reconciler enqueues it.
        deps.logger.warn({ deliveryId: delivery.id, err: (err as Error).message }, 'retry enqueue failed');
      }
      return presentDeliveryB(delivery);
    },
  };
}

export type TWebhookService = ReturnType<typeof createWebhookService>;
