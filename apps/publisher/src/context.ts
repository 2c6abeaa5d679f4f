import type { TPlatform, TTwitterAllowanceByPlan } from '@sps/core';
import {
  createPostRepository,
  createPublishRepository,
  createQueueRepository,
  createSocialAccountRepository,
  createTokenRepository,
  createUsageRepository,
  type TDb,
  type TPostRepository,
  type TPublishRepository,
  type TQueueRepository,
  type TSocialAccountRepository,
  type TUsageRepository,
} from '@sps/db';
import type { TNetworkConnector } from '@sps/networks';
import type { TQueues, TRedis } from '@sps/queue';
import type { Logger } from 'pino';
import type { TClaimLease } from './claim-lease.js';
import type { TEngagementOptions } from './engagement-options.js';
import { noopPublisherMetrics, type TPublisherMetrics } from './metrics.js';
import type { TPreparedPosts } from './prepared-posts.js';
import { createTokenRefresher, type TTokenRefreshConfig, type TTokenRefresher } from './token-refresh.js';

export interface TPublisherOptions {
  encryptionKey: Buffer;
  /** Variant A's monthly twitter allowance by plan, for scheduled and queued posts that fire. */
  twitterAllowance: TTwitterAllowanceByPlan;
  backoffBaseMs: number;
  /** A read-back that finds nothing is trusted only this long after the segment was sent. */
  readbackSettleMs: number;
  /** The write-ahead claim's lease and its renewal period (claim-lease.ts, from NETWORK_TIMEOUT). */
  claimLease: TClaimLease;
  /**
   * How long after the last send a network's idempotency key is trusted to dedupe a resend (defaults:
   * DEFAULT_KEY_TRUST_MS in readback.ts, from the networks' key lifetimes); tests shorten them.
   */
  keyTrustMs?: Partial<Record<TPlatform, number>>;
  /** A `publishing` post untouched this long is taken for one whose job was lost (reconciler). */
  stuckAfterMs: number;
}

export interface TPublisherContext {
  db: TDb;
  queues: TQueues;
  connectors: Partial<Record<TPlatform, TNetworkConnector>>;
  logger: Logger;
  options: TPublisherOptions;
  /** Publish outcomes and latency; a no-op unless the process serves /metrics. */
  metrics: TPublisherMetrics;
  posts: TPostRepository;
  publishing: TPublishRepository;
  queue: TQueueRepository;
  socialAccounts: TSocialAccountRepository;
  usage: TUsageRepository;
  /** Refreshes connected accounts' tokens (jobs, before a publish, after a 401). */
  tokens: TTokenRefresher;
  /** Scheduled posts this process prepared, started from memory at their due second. */
  prepared: TPreparedPosts;
  /** When metrics are collected after publishing (set by the composition root, publisher.ts). */
  engagement?: TEngagementOptions;
}

/**
 * What every processor gets: repositories, producers, connectors; built once at start-up. The prepared-post
 * runner is not built here: it runs the publish processor, which takes this context, so the composition root
 * (`publisher.ts`) builds it and passes the processor in; this module imports no processor.
 */
export function createPublisherContext(deps: {
  db: TDb;
  queues: TQueues;
  connectors: Partial<Record<TPlatform, TNetworkConnector>>;
  logger: Logger;
  options: TPublisherOptions;
  metrics?: TPublisherMetrics | undefined;
  /** The per-account refresh locks live here. */
  redis: TRedis;
  oauth: TTokenRefreshConfig;
}): Omit<TPublisherContext, 'prepared'> {
  const { redis, oauth, ...rest } = deps;
  const socialAccounts = createSocialAccountRepository(deps.db);
  return {
    ...rest,
    metrics: deps.metrics ?? noopPublisherMetrics,
    posts: createPostRepository(deps.db),
    publishing: createPublishRepository(deps.db),
    queue: createQueueRepository(deps.db),
    socialAccounts,
    usage: createUsageRepository(deps.db),
    tokens: createTokenRefresher({
      redis,
      tokens: createTokenRepository(deps.db),
      socialAccounts,
      queues: deps.queues,
      encryptionKey: deps.options.encryptionKey,
      logger: deps.logger,
      config: oauth,
    }),
  };
}
