import { registerQueueGauge } from '@sps/ops';
import { QUEUE_NAMES, type TQueues } from '@sps/queue';
import type { RequestHandler } from 'express';
import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';

export interface TApiMetrics {
  registry: Registry;
  httpDuration: Histogram<'method' | 'route' | 'status'>;
  rateLimited: Counter<'variant' | 'limit'>;
  /** Database lookups of API keys that were not cached: found, unknown, or refused while too many waited. */
  keyLookups: Counter<'outcome'>;
  /** Requests refused for their API key: invalid, or blocked (too many failures from the address). */
  authRefusals: Counter<'reason'>;
  middleware: RequestHandler;
}

/** The API's Prometheus metrics; queue counts are read from Redis at scrape time. */
export function createApiMetrics(queues: TQueues): TApiMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const httpDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by route and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const rateLimited = new Counter({
    name: 'rate_limit_rejections_total',
    help: 'Requests rejected by a rate limit',
    labelNames: ['variant', 'limit'] as const,
    registers: [registry],
  });
  const keyLookups = new Counter({
    name: 'api_key_lookups_total',
    help: 'Database lookups of API keys not in the cache, by outcome (found, unknown, busy)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const authRefusals = new Counter({
    name: 'auth_refusals_total',
    help: 'Requests refused for their API key: invalid, or blocked after too many failures from the address',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  registerQueueGauge(registry, queues, QUEUE_NAMES);

  const middleware: RequestHandler = (req, res, next) => {
    const end = httpDuration.startTimer();
    res.on('finish', () => {
      // The route pattern, not the URL, so ids do not explode the label set.
      const route = req.route?.path
        ? `${req.baseUrl}${req.route.path === '/' ? '' : req.route.path}`
        : 'unmatched';
      end({ method: req.method, route, status: String(res.statusCode) });
    });
    next();
  };
  return { registry, httpDuration, rateLimited, keyLookups, authRefusals, middleware };
}
