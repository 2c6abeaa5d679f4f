import { AppError, parseCreatePresetB, presentAccountB, presentPresetB } from '@sps/core';
import type { TSettingsRepository } from '@sps/db';
import { Router } from 'express';
import { authOf } from '../http/auth.js';
import type { TAccountService } from '../services/account-service.js';

export function accountsRouterB(accounts: TAccountService, settings: TSettingsRepository): Router {
  const router = Router();

  router.get('/accounts', async (req, res) => {
    const list = await accounts.listForB(authOf(req).accountId);
    res.json({ accounts: list.map(presentAccountB) });
  });

  router.get('/presets', async (req, res) => {
    const list = await settings.listPresets(authOf(req).accountId);
    res.json({ presets: list.map(presentPresetB) });
  });

  router.post('/presets', async (req, res) => {
    const input = parseCreatePresetB(req.body);
    const preset = await settings.createPreset(authOf(req).accountId, input);
    if (!preset) {
      throw new AppError('conflict', `A preset named "${input.name}" already exists`, {
        issues: [{ field: 'name', message: 'is already used by another preset of this account' }],
      });
    }
    res.status(201).json(presentPresetB(preset));
  });

  return router;
}
