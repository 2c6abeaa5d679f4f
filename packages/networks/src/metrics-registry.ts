import type { TPlatform } from '@sps/core';
import { createBlueskyMetrics } from './bluesky-metrics.js';
import type { TConnectorOptions, TNetworkConnector } from './connector.js';
import { createDiscordMetrics } from './discord-metrics.js';
import { createLinkedInMetrics } from './linkedin-metrics.js';
import { createMastodonMetrics } from './mastodon-metrics.js';
import { createFacebookMetrics, createInstagramMetrics } from './meta-metrics.js';
import type { TMetricsReader } from './metrics-reader.js';
import { createSlackMetrics } from './slack-metrics.js';
import { createThreadsMetrics } from './threads-metrics.js';
import { createTiktokMetrics } from './tiktok-metrics.js';
import { createTwitterMetrics } from './twitter-metrics.js';
import { createYoutubeMetrics } from './youtube-metrics.js';

/**
 * Each network's metrics reader, in a file of its own beside the connector; the registry attaches it to
 * the connector as `readMetrics`. A network absent here has no reader yet (docs/networks-and-permissions.md,
 * Reading engagement figures, lists them); Telegram has nothing to read.
 */
const READERS: Partial<Record<TPlatform, (options: TConnectorOptions) => TMetricsReader>> = {
  twitter: createTwitterMetrics,
  bluesky: createBlueskyMetrics,
  mastodon: createMastodonMetrics,
  youtube: createYoutubeMetrics,
  threads: createThreadsMetrics,
  tiktok: createTiktokMetrics,
  instagram: createInstagramMetrics,
  facebook: createFacebookMetrics,
  linkedin: createLinkedInMetrics,
  discord: createDiscordMetrics,
  slack: createSlackMetrics,
};

export function withMetricsReader(
  platform: TPlatform,
  connector: TNetworkConnector,
  options: TConnectorOptions,
): TNetworkConnector {
  const reader = READERS[platform]?.(options);
  if (!reader) return connector;
  connector.metricsBatchSize = reader.metricsBatchSize;
  connector.readMetrics = (account, refs) => reader.readMetrics(account, refs);
  return connector;
}
