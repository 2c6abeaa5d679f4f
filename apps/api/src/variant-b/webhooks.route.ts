import { parseCreateWebhookB, parseDeliveryPage, parseUpdateWebhookB } from '@sps/core';
import { Router } from 'express';
import { authOf } from '../http/auth.js';
import { idempotencyOf, type TIdempotent } from '../http/idempotency.js';
import type { TWebhookService } from '../services/webhook-service.js';

/** `/v1/webhooks`: registration (secret in the create response only), delivery history, manual retry. */
export function webhooksRouterB(webhooks: TWebhookService, idempotent: TIdempotent): Router {
  const router = Router();

  router.post('/webhooks', idempotent('create_webhook.B'), async (req, res) => {
    const key = idempotencyOf(req);
    const created = await webhooks.create(
      authOf(req).accountId,
      parseCreateWebhookB(req.body),
      key ? (answer) => key.withAnswer(201, answer) : undefined,
    );
    res.status(201).json(created);
  });

  router.get('/webhooks', async (req, res) => {
    res.json({ webhooks: await webhooks.list(authOf(req).accountId) });
  });

  router.get('/webhooks/:id', async (req, res) => {
    res.json(await webhooks.get(authOf(req).accountId, req.params.id));
  });

  router.put('/webhooks/:id', async (req, res) => {
    res.json(
      await webhooks.update(authOf(req).accountId, req.params.id, parseUpdateWebhookB(req.body ?? {})),
    );
  });

  router.delete('/webhooks/:id', async (req, res) => {
    await webhooks.remove(authOf(req).accountId, req.params.id);
    res.status(204).end();
  });

  router.get('/webhooks/:id/deliveries', async (req, res) => {
    res.json(await webhooks.deliveries(authOf(req).accountId, req.params.id, parseDeliveryPage(req.query)));
  });

  router.post('/webhooks/:id/deliveries/:deliveryId/retry', async (req, res) => {
    res.status(202).json(await webhooks.retry(authOf(req).accountId, req.params.id, req.params.deliveryId));
  });

  return router;
}
