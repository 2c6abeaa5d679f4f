import {
  DEFAULT_COLLECT_AFTER,
  mediaStorageConfig,
  networkBaseUrls,
  oauthAppsFromEnv,
  parseAppEnv,
  parseCollectAfter,
  parseDuration,
  parseEnvValue,
  type TMediaStorageConfig,
  ZBooleanFlag,
  ZCommonEnv,
  ZDuration,
  ZMediaEnv,
  ZMetricsHost,
  ZTwitterAllowance,
  zMetricsPort,
} from '@sps/core';
import { z } from 'zod';
import { parseReadBudgetOverrides } from './metrics-budget.js';

const BYTE_UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  kib: 1024,
  mib: 1024 ** 2,
  gib: 1024 ** 3,
  tib: 1024 ** 4,
};

/** A size in bytes: a whole number, or a number with a unit (`8GiB`, `500MB`, `1.5 GB`). */
const ZByteSize = z
  .string()
  .trim()
  .regex(/^\d+(\.\d+)?\s*([kmgt]i?b|b)?$/i, 'a size in bytes, such as 8589934592, 8GiB or 500MB')
  .transform((text) => {
    const [, amount = '0', unit = ''] = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(text) ?? [];
    return Math.floor(Number(amount) * (BYTE_UNITS[unit.toLowerCase()] ?? 1));
  })
  .pipe(z.number().int().min(1));

const ZPublisherEnv = ZCommonEnv.extend({
  ...ZMediaEnv.shape,
  /**
   * The API's public base URL (the API's PUBLIC_URL): media library URLs under it are read from the media
   * store instead of over HTTP. Defaults to the API's own default.
   */
  PUBLIC_URL: z.url({ protocol: /^https?$/ }).default('http://127.0.0.1:3000'),
  PUBLISH_CONCURRENCY: z.coerce.number().int().min(1).max(500).default(50),
  /**
   * Fair lanes (publish-lanes.ts): the share of a process's publishing slots one network may hold at once
   * (of PUBLISH_CONCURRENCY, and of the prepared posts' 200 in-process slots); at least one slot. 1 turns
   * the network lanes off.
   */
  PUBLISH_NETWORK_SHARE: z.coerce.number().gt(0).max(1).default(0.25),
  /** Publishes of one connected account at once over every publisher process (Redis leases); 0: no cap. */
  PUBLISH_ACCOUNT_CONCURRENCY: z.coerce.number().int().min(0).max(10_000).default(25),
  /** An account lane place lapses this long after its publisher stopped renewing it (a killed process). */
  PUBLISH_LANE_LEASE: ZDuration.default(parseDuration('30s')),
  /**
   * A job whose lane is full goes back to delayed for a quarter of how long it has waited, at least this
   * long and at most ten times this (±25 %).
   */
  PUBLISH_LANE_RETRY: ZDuration.default(parseDuration('200ms')),
  /**
   * A scheduled post started in memory at its due second waits this long, first come first served per
   * network, for a place in its lanes before it is handed to a delayed publish job instead.
   */
  PUBLISH_LANE_WAIT: ZDuration.default(parseDuration('60s')),
  /** Per network call. */
  NETWORK_TIMEOUT: ZDuration.default(parseDuration('30s')),
  /** First retry delay of a transient network failure; doubles per attempt, capped at 5 minutes. */
  PUBLISH_BACKOFF_BASE: ZDuration.default(parseDuration('5s')),
  RECONCILE_EVERY: ZDuration.default(parseDuration('30s')),
  /**
   * Media processing checks (Instagram/Threads containers): the pause between two checks and the longest
   * wait. Unset: each network's documented cadence (Meta: once a minute, at most 5 minutes). Each check
   * is one short job; no worker slot waits in between.
   */
  PROCESSING_CHECK_EVERY: ZDuration.optional(),
  PROCESSING_MAX_WAIT: ZDuration.optional(),
  /** A `publishing` post untouched this long is taken for one whose job was lost and gets it back. */
  RECONCILE_STUCK_AFTER: ZDuration.default(parseDuration('2m')),
  /**
   * How long after a segment was sent a read-back that finds nothing is trusted: until then the network may
   * still be storing it (or its reads may lag), so the job asks again later instead of sending.
   */
  READBACK_SETTLE: ZDuration.default(parseDuration('60s')),
  /** A job's lock lifetime: how soon a killed process's active jobs are picked up again (stalled check). */
  JOB_LOCK_DURATION: ZDuration.default(parseDuration('30s')),
  /** `GET /metrics` and `GET /healthz` of this process; 0 turns the server off. */
  METRICS_PORT: zMetricsPort(9101),
  /** Where METRICS_PORT listens: loopback by default (see README, Security). */
  METRICS_HOST: ZMetricsHost,
  /** `true` lets media URLs resolve to loopback or private addresses (tests only; contract). */
  MEDIA_ALLOW_PRIVATE_URLS: ZBooleanFlag,
  /** Bound on one image download (all redirects, headers and body). */
  MEDIA_DOWNLOAD_TIMEOUT: ZDuration.default(parseDuration('30s')),
  /** Bound on one video download (videos run to hundreds of megabytes). */
  MEDIA_VIDEO_DOWNLOAD_TIMEOUT: ZDuration.default(parseDuration('5m')),
  /**
   * Disk all videos spooled at once by this process may take (bytes, or with a unit: `8GiB`, `500MB`); one
   * account holds at most half of it. A video that does not fit now is retried later; one larger than it
   * all is refused. Default 8 GiB.
   */
  MEDIA_SPOOL_MAX: ZByteSize.default(8 * 1024 ** 3),
  /** Variant A's twitter publishes per UTC month by plan; scheduled and queued posts take theirs here. */
  TWITTER_MONTHLY_ALLOWANCE: ZTwitterAllowance,
  /** `LinkedIn-Version` (YYYYMM): LinkedIn serves each monthly version for one year, then answers 426. */
  LINKEDIN_API_VERSION: z
    .string()
    .regex(/^\d{6}(\.\d{2})?$/, 'a LinkedIn version is YYYYMM (or YYYYMM.NN)')
    .default('202607'),
  /** Graph API version for Facebook and Instagram (`vNN.0`); each is served at least two years. */
  META_GRAPH_API_VERSION: z
    .string()
    .regex(/^v\d+\.\d+$/, 'a Graph API version looks like v25.0')
    .default('v25.0'),
  /** Bluesky's video service (app.bsky.video.*), where videos are processed before they are posted. */
  NETWORK_BLUESKY_VIDEO_URL: z.string().url().optional(),
  /** When metrics are collected after a post is published: durations, comma-separated (contract). */
  METRICS_COLLECT_AFTER: z
    .string()
    .default(DEFAULT_COLLECT_AFTER)
    .transform((value, ctx) => {
      try {
        return parseCollectAfter(value);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
    }),
  /** Metrics jobs at once: their own lane, so reading figures never takes a publishing slot. */
  METRICS_CONCURRENCY: z.coerce.number().int().min(1).max(100).default(4),
  /**
   * Share of each network's documented rate limit that metrics reads may take, counted in Redis across
   * every publisher (metrics-budget.ts); the rest stays for publishing. A read past it waits (delayed job).
   */
  METRICS_READ_SHARE: z.coerce.number().gt(0).max(1).default(0.5),
  /**
   * Share of a network-wide read cap (YouTube, TikTok, Bluesky) one tenant may take per window, at least
   * one read, so one tenant's backlog leaves reads for the others. Per-account caps are unchanged.
   */
  METRICS_TENANT_SHARE: z.coerce.number().gt(0).max(1).default(0.5),
  /**
   * Per-network read caps replacing share × documented limit: `network=calls/window[:account|network]`,
   * comma-separated (e.g. `mastodon=100/5m,twitter=300/15m`). Empty: the documented limits.
   */
  METRICS_READ_BUDGET: z
    .string()
    .default('')
    .transform((value, ctx) => {
      try {
        return parseReadBudgetOverrides(value);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
    }),
  /** Facebook's video host (graph-video.facebook.com); unset: NETWORK_FACEBOOK_BASE_URL when set, else the real host. */
  NETWORK_FACEBOOK_VIDEO_BASE_URL: z.string().url().optional(),
  /** Threads API version (graph.threads.net has only v1.0 so far). */
  THREADS_API_VERSION: z
    .string()
    .regex(/^v\d+\.\d+$/, 'a Threads API version looks like v1.0')
    .default('v1.0'),
});

export type TPublisherEnv = z.output<typeof ZPublisherEnv> & {
  encryptionKey: Buffer;
  usesDevelopmentKey: boolean;
  networkBaseUrls: ReturnType<typeof networkBaseUrls>;
  /** `OAUTH_<NAME>_CLIENT_ID`/`_SECRET` and `NETWORK_<NAME>_TOKEN_URL`: token refreshes use them. */
  oauthApps: ReturnType<typeof oauthAppsFromEnv>;
  mediaStorage: TMediaStorageConfig;
  publicUrl: string;
};

export function loadEnv(source: Record<string, string | undefined> = process.env): TPublisherEnv {
  const env = parseAppEnv(ZPublisherEnv, source);
  return {
    ...env,
    networkBaseUrls: networkBaseUrls(source),
    oauthApps: oauthAppsFromEnv(source),
    mediaStorage: parseEnvValue('MEDIA_STORAGE', () => mediaStorageConfig(env)),
    publicUrl: env.PUBLIC_URL.replace(/\/+$/, ''),
  };
}
