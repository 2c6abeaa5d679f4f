import {
  parseAnalyticsQuery,
  parsePostMetricsQuery,
  presentAnalyticsB,
  presentPostMetricsB,
} from '@sps/core';
import { Router } from 'express';
import { authOf } from '../http/auth.js';
import type { TMetricsService } from '../services/metrics-service.js';

/** Engagement (contract, "Engagement"): a post's figures per network, a refresh, analytics over a range. */
export function metricsRouterB(engagement: TMetricsService): Router {
  const router = Router();

  router.get('/posts/:id/metrics', async (req, res) => {
    const query = parsePostMetricsQuery(req.query as Record<string, unknown>);
    const entries = await engagement.postMetrics(authOf(req).accountId, req.params.id, query);
    res.json(presentPostMetricsB(req.params.id, entries));
  });

  router.post('/posts/:id/metrics/refresh', async (req, res) => {
    await engagement.refresh(authOf(req).accountId, req.params.id);
    res.status(202).json({ post_id: req.params.id, status: 'collecting' });
  });

  router.get('/analytics', async (req, res) => {
    const query = parseAnalyticsQuery(req.query as Record<string, unknown>, new Date());
    res.json(presentAnalyticsB(await engagement.analytics(authOf(req).accountId, query)));
  });

  return router;
}
