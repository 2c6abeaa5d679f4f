import type { TPlatform } from '@sps/core';
import { createBlueskyConnector } from './bluesky.connector.js';
import type { TConnectorOptions, TNetworkConnector, TProcessingWait } from './connector.js';
// group-2 imports
import { createDiscordConnector } from './discord.connector.js';
import { createFacebookConnector } from './facebook.connector.js';
import { createInstagramConnector } from './instagram.connector.js';
// group-1 imports
import { createLinkedInConnector } from './linkedin.connector.js';
import { createMastodonConnector } from './mastodon.connector.js';
import { createMediaFetcher, type TMediaFetchConfig } from './media-fetch.js';
import { withMetricsReader } from './metrics-registry.js';
import { guardPermissions } from './permissions/permission-guard.js';
import { createSlackConnector } from './slack.connector.js';
import { withSpoolWait } from './spool-wait.js';
import { createTelegramConnector } from './telegram.connector.js';
import { createThreadsConnector } from './threads.connector.js';
import { createTiktokConnector } from './tiktok.connector.js';
import { createTwitterConnector } from './twitter.connector.js';
import { createYoutubeConnector } from './youtube.connector.js';

type TFactory = (options: TConnectorOptions) => TNetworkConnector;

const FACTORIES: Partial<Record<TPlatform, TFactory>> = {
  // group-1 factories
  linkedin: createLinkedInConnector,
  facebook: createFacebookConnector,
  threads: createThreadsConnector,
  bluesky: createBlueskyConnector,
  mastodon: createMastodonConnector,
  twitter: createTwitterConnector,
  // group-2 factories
  discord: createDiscordConnector,
  instagram: createInstagramConnector,
  slack: createSlackConnector,
  telegram: createTelegramConnector,
  tiktok: createTiktokConnector,
  youtube: createYoutubeConnector,
};

export interface TConnectorsConfig {
  /** `NETWORK_<NAME>_BASE_URL` values; a missing one means the network's real host. */
  baseUrls: Partial<Record<TPlatform, string>>;
  timeoutMs?: number;
  /** How media given by API users is downloaded (address policy, time bound). */
  media?: TMediaFetchConfig;
  /** API versions per network (`LINKEDIN_API_VERSION`, `META_GRAPH_API_VERSION`); a missing one means the connector's default. */
  apiVersions?: Partial<Record<TPlatform, string>>;
  /** Shortens media processing waits (tests); production uses each network's documented cadence. */
  processingWait?: TProcessingWait;
  /** Bluesky's video service (`NETWORK_BLUESKY_VIDEO_URL`); a missing one means https://video.bsky.app. */
  blueskyVideoUrl?: string;
  /** Facebook's video host (`NETWORK_FACEBOOK_VIDEO_BASE_URL`); a missing one means the base URL, else the real host. */
  facebookVideoBaseUrl?: string;
  /** Operator app ids per network (`OAUTH_<NAME>_CLIENT_ID`): Facebook's video uploads need it. */
  appIds?: Partial<Record<TPlatform, string>>;
  /** Piece size of chunked media uploads (tests shrink it); each connector's own default otherwise. */
  uploadChunkBytes?: number;
}

/** Builds one connector per network, once at worker start-up. */
export function createConnectors(config: TConnectorsConfig): Partial<Record<TPlatform, TNetworkConnector>> {
  const out: Partial<Record<TPlatform, TNetworkConnector>> = {};
  // Media downloads have their own time bounds (a video takes longer than an API call).
  const fetchMedia = createMediaFetcher(config.media);
  for (const [platform, factory] of Object.entries(FACTORIES) as [TPlatform, TFactory][]) {
    const baseUrl = config.baseUrls[platform];
    const apiVersion = config.apiVersions?.[platform];
    const options = {
      ...(baseUrl ? { baseUrl } : {}),
      ...(apiVersion ? { apiVersion } : {}),
      ...(config.processingWait ? { processingWait: config.processingWait } : {}),
      ...(config.timeoutMs ? { timeoutMs: config.timeoutMs } : {}),
      ...(platform === 'bluesky' && config.blueskyVideoUrl
        ? { videoServiceUrl: config.blueskyVideoUrl }
        : {}),
      ...(platform === 'facebook' && config.facebookVideoBaseUrl
        ? { videoBaseUrl: config.facebookVideoBaseUrl }
        : {}),
      ...(config.appIds?.[platform] ? { appId: config.appIds[platform] } : {}),
      ...(config.uploadChunkBytes ? { uploadChunkBytes: config.uploadChunkBytes } : {}),
      fetchMedia,
    };
    // Every call checks the account's permissions first (DESIGN invariant 12), the metrics read too: the
    // reader is attached before the guard wraps the connector.
    // A full spool budget waits like media processing (spool-wait.ts), under the permission guard.
    out[platform] = guardPermissions(withSpoolWait(withMetricsReader(platform, factory(options), options)));
  }
  return out;
}
