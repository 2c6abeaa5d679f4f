import { parseQueueSettings, presentAccountA } from '@sps/core';
import { Router } from 'express';
import { authOf } from '../http/auth.js';
import type { TAccountService } from '../services/account-service.js';

export function accountsRouterA(accounts: TAccountService): Router {
  const router = Router();

  router.get('/accounts', async (req, res) => {
    const list = await accounts.listForA(authOf(req).accountId);
    res.json({ accounts: list.map(presentAccountA) });
  });

  router.get('/queue-settings', async (req, res) => {
    res.json(await accounts.getQueueSettings(authOf(req).accountId));
  });

  router.put('/queue-settings', async (req, res) => {
    const { accountId } = authOf(req);
    const current = await accounts.getQueueSettings(accountId);
    const next = parseQueueSettings(req.body, current);
    res.json(await accounts.putQueueSettings(accountId, next));
  });

  return router;
}
