import type { TPlatform, TTwitterAllowanceByPlan } from '@sps/core';
import {
  createPostRepository,
  createPublishRepository,
  createQueueRepository,
  createSocialAccountRepository,
  createUsageRepository,
  type TDb,
  type TPostRepository,
  type TPublishRepository,
  type TQueueRepository,
  type TSocialAccountRepository,
  type TUsageRepository,
} from '@sps/db';
import type { TNetworkConnector } from '@sps/networks';
import type { TQueues } from '@sps/queue';
import type { Logger } from 'pino';
import { noopPublisherMetrics, type TPublisherMetrics } from './metrics.js';

export interface TPublisherOptions {
  encryptionKey: Buffer;
  /** Variant A's monthly twitter allowance by plan, for scheduled and queued posts that fire. */
  twitterAllowance: TTwitterAllowanceByPlan;
  backoffBaseMs: number;
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
}

/** What every processor gets: repositories, producers, connectors; built once at start-up. */
export function createPublisherContext(deps: {
  db: TDb;
  queues: TQueues;
  connectors: Partial<Record<TPlatform, TNetworkConnector>>;
  logger: Logger;
  options: TPublisherOptions;
  metrics?: TPublisherMetrics | undefined;
}): TPublisherContext {
  return {
    ...deps,
    metrics: deps.metrics ?? noopPublisherMetrics,
    posts: createPostRepository(deps.db),
    publishing: createPublishRepository(deps.db),
    queue: createQueueRepository(deps.db),
    socialAccounts: createSocialAccountRepository(deps.db),
    usage: createUsageRepository(deps.db),
  };
}
