import { AppError, type TAnalyticsQuery, type TPostMetricsQuery, UUID_PATTERN } from '@sps/core';
import type { TMetricsRepository } from '@sps/db';
import { enqueueMetricsRefresh, type TQueues } from '@sps/queue';
import type { WindowLimiter } from '../http/rate-limit.js';
import { retryAfterSeconds } from '../http/rate-limit.js';

export interface TMetricsServiceDeps {
  metrics: TMetricsRepository;
  queues: TQueues;
  /** Refreshes per account and window: each one spends the networks' read budget of the account's connections. */
  refreshLimiter: WindowLimiter;
}

const notFound = (postId: string) =>
  new AppError('not_found', `Post ${postId} not found`, {
    fix: 'Check the post id; it is the id returned by create or list.',
  });

/** Engagement figures: the latest snapshot of each network, manual refreshes, analytics over a range. */
export function createMetricsService(deps: TMetricsServiceDeps) {
  return {
    async postMetrics(accountId: string, postId: string, query: TPostMetricsQuery = { history: false }) {
      // Not a post id at all: the same 404 as an unknown one (the database is not asked).
      const entries = UUID_PATTERN.test(postId)
        ? await deps.metrics.postMetrics(accountId, postId, { history: query.history })
        : null;
      if (!entries) throw notFound(postId);
      return entries;
    },

    /**
     * Queues a collection of the post's figures now. Refused (409) for a post not published anywhere yet,
     * and rate limited per account: a refused request queues nothing.
     */
    async refresh(accountId: string, postId: string): Promise<{ jobId: string }> {
      const published = UUID_PATTERN.test(postId)
        ? await deps.metrics.publishedPost(accountId, postId)
        : null;
      if (published === null) throw notFound(postId);
      if (!published) {
        throw new AppError(
          'conflict',
          'The post is not published on any network yet: there is nothing to read',
          {
            fix: 'Publish the post first; figures are collected after it is out.',
          },
        );
      }
      const result = await deps.refreshLimiter.consume(accountId);
      if (!result.allowed) {
        const retryAfter = retryAfterSeconds(result);
        throw new AppError(
          'rate_limited',
          `Metrics refresh limit exceeded: ${result.limit} refreshes per hour for this account`,
          {
            retryAfter,
            fix: `Wait ${retryAfter} seconds; figures are also collected on their own after publishing.`,
            // The spec's 429 details (Rate limits, Variant B): reset_at too, as every other 429 has.
            details: {
              limit: result.limit,
              remaining: 0,
              reset_at: new Date(Date.now() + result.msBeforeNext).toISOString(),
              retry_after: retryAfter,
            },
          },
        );
      }
      const at = Date.now();
      await enqueueMetricsRefresh(deps.queues, postId, at);
      return { jobId: `metrics-refresh-${postId}-${at}` };
    },

    analytics(accountId: string, query: TAnalyticsQuery) {
      return deps.metrics.analytics(accountId, query);
    },
  };
}

export type TMetricsService = ReturnType<typeof createMetricsService>;
