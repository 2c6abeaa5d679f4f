import { connectSelectionOf, parseConnectCredentialsB, parseConnectStartB, presentAccountB } from '@sps/core';
import { Router } from 'express';
import { SessionStore } from '../dashboard/session-store.js';
import { authOf } from '../http/auth.js';
import type { TConnectService } from '../services/connect-service.js';

/** Connecting and disconnecting social accounts (contract, "Connecting social accounts"). */
export function connectRouterB(connect: TConnectService): Router {
  const router = Router();

  router.post('/accounts/connect', async (req, res) => {
    const input = parseConnectStartB(req.body);
    const started = await connect.start(authOf(req).accountId, {
      platform: input.platform,
      redirectUri: input.redirect_uri,
      instance: input.instance,
      selection: connectSelectionOf(input),
      // Started from the dashboard (the same router behind the session): bound to that session.
      sessionHash: req.session ? SessionStore.hashOf(req.session.id) : null,
    });
    res.json({ url: started.url, state: started.state, expires_at: started.expiresAt.toISOString() });
  });

  router.post('/accounts', async (req, res) => {
    const input = parseConnectCredentialsB(req.body);
    const account = await connect.connectWithCredentials(
      authOf(req).accountId,
      input.platform,
      input.credentials,
    );
    res.status(201).json(presentAccountB(account));
  });

  router.delete('/accounts/:id', async (req, res) => {
    await connect.disconnect(authOf(req).accountId, req.params.id);
    res.status(204).end();
  });

  return router;
}
