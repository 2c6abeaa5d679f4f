import {
  parseAnalyticsQuery,
  parsePostMetricsQuery,
  presentAnalyticsA,
  presentPostMetricsA,
} from '@sps/core';
import { Router } from 'express';
import { authOf } from '../http/auth.js';
import type { TMetricsService } from '../services/metrics-service.js';

/** Variant A's engagement routes: the same service, camelCase and `success` as the rest of `/api`. */
export function metricsRouterA(engagement: TMetricsService): Router {
  const router = Router();

  router.get('/posts/:id/metrics', async (req, res) => {
    const query = parsePostMetricsQuery(req.query as Record<string, unknown>);
    const entries = await engagement.postMetrics(authOf(req).accountId, req.params.id, query);
    res.json(presentPostMetricsA(req.params.id, entries));
  });

  router.post('/posts/:id/metrics/refresh', async (req, res) => {
    await engagement.refresh(authOf(req).accountId, req.params.id);
    res.status(202).json({ success: true, postId: req.params.id, status: 'collecting' });
  });

  router.get('/analytics', async (req, res) => {
    const query = parseAnalyticsQuery(req.query as Record<string, unknown>, new Date());
    res.json(presentAnalyticsA(await engagement.analytics(authOf(req).accountId, query)));
  });

  return router;
}
