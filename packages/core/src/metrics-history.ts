import { z } from 'zod';
import { validationError } from './app-error.js';
import { givenQueryValues } from './list-query-input.js';
import type { TMetricSnapshot } from './metrics-model.js';
import { zodIssues } from './zod-issues.js';

// A post's figures over time: every collection of each network (`GET /v1/posts/{id}/metrics?history=true`),
// beside the latest one the contract's answer shows. Asked for, never added by default: the contract's
// answer keeps its exact keys.

/** The most collections a history lists per network (the latest ones): the default schedule makes 6. */
export const METRICS_HISTORY_LIMIT = 100;

export const ZPostMetricsQuery = z
  .object({
    history: z
      .enum(['true', 'false'], { error: 'must be true or false' })
      .optional()
      .meta({
        description: `true adds \`history\` to each network: its collections, oldest first (at most the latest ${METRICS_HISTORY_LIMIT}).`,
      }),
  })
  .strict();

export interface TPostMetricsQuery {
  history: boolean;
}

export function parsePostMetricsQuery(query: Record<string, unknown>): TPostMetricsQuery {
  const clean = givenQueryValues(query);
  if (Array.isArray(clean.history))
    throw validationError([{ field: 'history', message: 'must be given once' }]);
  const parsed = ZPostMetricsQuery.safeParse(clean);
  if (!parsed.success) throw validationError(zodIssues(parsed.error));
  return { history: parsed.data.history === 'true' };
}

/** One collection in a history (Variant B keys): its figures, or the error that kept them from being read. */
export function historyPointB(snapshot: TMetricSnapshot): Record<string, unknown> {
  const collected_at = snapshot.collectedAt.toISOString();
  return snapshot.error ? { collected_at, error: snapshot.error } : { collected_at, ...snapshot.figures };
}
