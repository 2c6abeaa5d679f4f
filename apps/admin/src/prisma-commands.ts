import { presentDeliveryB } from '@sps/core';
import { createSocialAccountRepository, createWebhookRepository } from '@sps/db';
import { createQueues, createRedisFactory, enqueueWebhookDelivery } from '@sps/queue';
import { id, type THandler, UsageError } from './context.js';

// The commands that use the repositories (Prisma) and BullMQ: loaded only when one of them runs.

export const PRISMA_COMMANDS: Record<string, THandler> = {
  'social disconnect': async (ctx, o) => {
    const accountId = id(o, 'account');
    const socialAccountId = id(o, 'social-account');
    const account = await createSocialAccountRepository(await ctx.db()).disconnect(
      accountId,
      socialAccountId,
      'manual',
    );
    if (!account) throw new UsageError(`no social account ${socialAccountId} in account ${accountId}`);
    return { socialAccountId, isActive: account.isActive };
  },

  /** Delivery history of one webhook, newest first (`--limit`, `--offset`). */
  'webhook deliveries': async (ctx, o) => {
    const accountId = id(o, 'account');
    const webhookId = id(o, 'webhook');
    const limit = Number(o.limit ?? 20);
    const offset = Number(o.offset ?? 0);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new UsageError('--limit must be 1..100');
    if (!Number.isInteger(offset) || offset < 0) throw new UsageError('--offset must be 0 or more');
    const page = await createWebhookRepository(await ctx.db()).listDeliveries(accountId, webhookId, {
      limit,
      offset,
    });
    if (!page) throw new UsageError(`no webhook ${webhookId} in account ${accountId}`);
    return { webhookId, total: page.total, deliveries: page.deliveries.map(presentDeliveryB) };
  },

  /** Starts a failed delivery over and enqueues it (the webhooks reconciler enqueues it if Redis is down). */
  'webhook retry': async (ctx, o) => {
    const accountId = id(o, 'account');
    const deliveryId = id(o, 'delivery');
    const webhooks = createWebhookRepository(await ctx.db());
    const delivery = await webhooks.findDelivery(accountId, deliveryId);
    if (!delivery) throw new UsageError(`no delivery ${deliveryId} in account ${accountId}`);
    const outcome = await webhooks.resetFailedDelivery(accountId, delivery.webhookId, deliveryId);
    if (outcome.kind === 'not_failed')
      throw new UsageError(`delivery ${deliveryId} is ${outcome.status}, not failed`);
    if (outcome.kind === 'webhook_inactive')
      throw new UsageError('the webhook is not active; re-activate it first');
    if (outcome.kind !== 'reset') throw new UsageError(`no delivery ${deliveryId} in account ${accountId}`);
    const redis = createRedisFactory({
      url: ctx.env.REDIS_URL,
      clusterNodes: ctx.env.REDIS_CLUSTER_NODES,
    }).producer({ lazyConnect: true });
    redis.on('error', () => undefined);
    const queues = createQueues(redis, ctx.env.QUEUE_PREFIX);
    let enqueued = true;
    try {
      await redis.connect();
      await enqueueWebhookDelivery(
        queues,
        { deliveryId, eventId: delivery.eventId, webhookId: delivery.webhookId },
        { replaceFinished: true },
      );
    } catch {
      enqueued = false;
    } finally {
      await queues.close().catch(() => undefined);
      redis.disconnect();
    }
    return { deliveryId, status: outcome.delivery.status, enqueued };
  },
};
