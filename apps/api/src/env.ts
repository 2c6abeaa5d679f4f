import {
  DEFAULT_AVAILABILITY_A,
  mediaStorageConfig,
  networkBaseUrls,
  oauthAppsFromEnv,
  parseAppEnv,
  parseAvailability,
  parseDuration,
  parseEnvValue,
  parseTwitterAllowance,
  type TMediaStorageConfig,
  type TTwitterAllowanceByPlan,
  ZBooleanFlag,
  ZCommonEnv,
  ZDuration,
  ZMediaEnv,
} from '@sps/core';
import { z } from 'zod';
import { parseTrustProxy } from './http/client-address.js';
import { originOf } from './http/origin.js';
import { parseTiersB, type TTiersB } from './limits-config.js';

const ZApiEnv = ZCommonEnv.extend({
  ...ZMediaEnv.shape,
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  /**
   * Where the API listens. Unset: every interface (`0.0.0.0`) with ENCRYPTION_KEY, loopback only without it
   * (a service sealing tokens with the development key must not be reachable from elsewhere).
   */
  HOST: z.string().min(1).optional(),
  BODY_LIMIT: z.string().default('1mb'),
  /**
   * How long a verified API key is trusted without a database lookup; revocations evict at once via Redis,
   * and the cache is emptied whenever that subscription reconnects. At most 60 s: it is also how long a
   * revocation whose message was lost can go unnoticed.
   */
  API_KEY_CACHE_TTL: ZDuration.default(parseDuration('30s')).refine((ms) => ms <= 60_000, {
    message: 'must be at most 60s (a revoked key stays usable that long if its eviction message is lost)',
  }),
  /**
   * Requests with a wrong API key per client address (IPv6 by /64) and minute, on /v1, /api and /mcp; past
   * it, requests whose key is not already verified are refused with 429 before the database is asked.
   * Holds with RATE_LIMITS=off too: it protects keys and the database, not capacity.
   */
  AUTH_FAILURES_PER_MINUTE: z.coerce.number().int().min(1).default(30),
  /**
   * `POST /v1/posts/{id}/metrics/refresh` (and Variant A's and MCP's equivalents) per account and hour.
   * Holds with RATE_LIMITS=off too: each refresh spends the networks' read budget of the account.
   */
  METRICS_REFRESH_PER_HOUR: z.coerce.number().int().min(1).max(10_000).default(30),
  ADMIN_TOKEN: z.string().min(16, 'ADMIN_TOKEN must be at least 16 characters').optional(),
  /** Which proxies' X-Forwarded-For is believed: a hop count or their addresses/CIDRs (client-address.ts). */
  TRUST_PROXY: z
    .string()
    .default('')
    .transform((value, ctx) => {
      try {
        return parseTrustProxy(value);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
    }),
  WEBHOOK_ALLOW_PRIVATE_URLS: ZBooleanFlag,
  /** `true` lets media URLs given to MCP's upload_media resolve to loopback or private addresses (tests only). */
  MEDIA_ALLOW_PRIVATE_URLS: ZBooleanFlag,
  /** Bound on one download of MCP upload_media from a URL (all hops, headers and body), as the publisher's for videos. */
  MEDIA_VIDEO_DOWNLOAD_TIMEOUT: ZDuration.default(parseDuration('5m')),
  /** Variant A network availability, `platform=live|testing|pending_approval|disabled,...`. */
  NETWORK_AVAILABILITY: z.string().default(DEFAULT_AVAILABILITY_A),
  /** How long Variant A publish, create-with-published and retry wait for the networks' outcome. */
  PUBLISH_WAIT: ZDuration.default(parseDuration('20s')),
  /**
   * How long a request with an Idempotency-Key may run (beyond Variant A's PUBLISH_WAIT) before a retry
   * with the same key counts it as crashed and takes over. A live request that overruns it loses nothing:
   * its writes are fenced by its lease, so only one of the two makes the resource.
   */
  IDEMPOTENCY_LEASE: ZDuration.default(parseDuration('30s')),
  /** `off` disables the request rate limits (benchmarks, single-tenant installs); quotas still apply. */
  RATE_LIMITS: z.enum(['on', 'off']).default('on'),
  /** Variant A: requests per minute per client IP; 120 leaves a dashboard's polling plenty of room. */
  RATE_LIMIT_A_PER_MINUTE: z.coerce.number().int().min(1).default(120),
  /** Variant A: publishing requests (publish, retry, create/update with `published: true`) per hour per IP. */
  RATE_LIMIT_A_PUBLISH_PER_HOUR: z.coerce.number().int().min(1).default(50),
  /** Variant B tiers, `tier=<requests per minute>/<publishes per hour>,...`; unlisted tiers keep the defaults. */
  RATE_LIMIT_B_TIERS: z.string().default(''),
  /**
   * Multiplies every window length (1 = a real minute and hour). Only tests set it, to watch a window reset
   * in seconds; windows never get shorter than one second because Redis expiry is in whole seconds.
   */
  RATE_LIMIT_WINDOW_SCALE: z.coerce.number().positive().max(1).default(1),
  /** Variant A: twitter publishes per calendar month (UTC) by plan, `plan=count,...`; unlisted plans keep the defaults. */
  TWITTER_MONTHLY_ALLOWANCE: z.string().default(''),
  /** The service's public base URL; OAuth redirect URIs are `${PUBLIC_URL}/oauth/callback/<platform>`. */
  PUBLIC_URL: z.url({ protocol: /^https?$/ }).optional(),
  /**
   * Origins (comma-separated, `https://app.example.com`) a connect flow's `redirect_uri` may point to besides
   * PUBLIC_URL's own; any other is refused (400 naming `redirect_uri`), so the callback never redirects to a
   * host the operator did not name.
   */
  CONNECT_REDIRECT_ORIGINS: z
    .string()
    .default('')
    .transform((value, ctx) => {
      const origins: string[] = [];
      for (const entry of value.split(',').map((e) => e.trim())) {
        if (!entry) continue;
        const origin = originOf(entry);
        if (!origin || origin !== entry.replace(/\/+$/, '')) {
          ctx.addIssue({
            code: 'custom',
            message: `"${entry}" is not an origin (scheme://host[:port], http or https, no path)`,
          });
          return z.NEVER;
        }
        origins.push(origin);
      }
      return origins;
    }),
  /** Bound on each call to a network's token or identity endpoint while connecting an account. */
  OAUTH_TIMEOUT: ZDuration.default(parseDuration('15s')),
  /** `LinkedIn-Version` of the organization look-ups at connect (the publisher reads the same variable). */
  LINKEDIN_API_VERSION: z
    .string()
    .regex(/^\d{6}(\.\d{2})?$/, 'a LinkedIn version is YYYYMM (or YYYYMM.NN)')
    .default('202607'),
  /** Live dashboard streams (`/dashboard/api/events`) one account may keep open per API process. */
  DASHBOARD_EVENTS_PER_ACCOUNT: z.coerce.number().int().min(1).max(100).default(10),
  /** How often an open dashboard stream sends a keep-alive comment and checks that its session still exists. */
  DASHBOARD_EVENTS_HEARTBEAT: ZDuration.default(parseDuration('15s')),
  /** How often the outbox is read for the dashboard's streams while any is open (one read for all of them). */
  DASHBOARD_EVENTS_POLL: ZDuration.default(parseDuration('250ms')),
});

export type TApiEnv = Omit<z.output<typeof ZApiEnv>, 'HOST'> & {
  HOST: string;
  encryptionKey: Buffer;
  usesDevelopmentKey: boolean;
  networkBaseUrls: ReturnType<typeof networkBaseUrls>;
  availability: ReturnType<typeof parseAvailability>;
  tiersB: TTiersB;
  twitterAllowance: TTwitterAllowanceByPlan;
  publicUrl: string;
  /** Where a connect's `redirect_uri` may point: PUBLIC_URL's origin and CONNECT_REDIRECT_ORIGINS. */
  redirectOrigins: string[];
  /** PUBLIC_URL is https: cookies are `Secure`. */
  secureCookies: boolean;
  oauthApps: ReturnType<typeof oauthAppsFromEnv>;
  mediaStorage: TMediaStorageConfig;
};

export function loadEnv(source: Record<string, string | undefined> = process.env): TApiEnv {
  const env = parseAppEnv(ZApiEnv, source);
  const publicUrl = (env.PUBLIC_URL ?? `http://127.0.0.1:${env.PORT}`).replace(/\/+$/, '');
  const secureCookies = publicUrl.startsWith('https:');
  // The API speaks plain http: an https PUBLIC_URL means a TLS proxy in front, whose X-Forwarded-For must be
  // believed for per-address limits to count clients rather than the proxy.
  if (secureCookies && env.TRUST_PROXY === 0) {
    throw new Error(
      'Invalid environment: TRUST_PROXY: PUBLIC_URL is https, so a TLS proxy is in front of the API; set TRUST_PROXY to the number of proxies (1) or their addresses, or every client would count as the proxy',
    );
  }
  return {
    ...env,
    HOST: env.HOST ?? (env.usesDevelopmentKey ? '127.0.0.1' : '0.0.0.0'),
    networkBaseUrls: networkBaseUrls(source),
    publicUrl,
    redirectOrigins: [...new Set([originOf(publicUrl) ?? publicUrl, ...env.CONNECT_REDIRECT_ORIGINS])],
    secureCookies,
    oauthApps: oauthAppsFromEnv(source),
    mediaStorage: parseEnvValue('MEDIA_STORAGE', () => mediaStorageConfig(env)),
    tiersB: parseEnvValue('RATE_LIMIT_B_TIERS', () => parseTiersB(env.RATE_LIMIT_B_TIERS)),
    twitterAllowance: parseEnvValue('TWITTER_MONTHLY_ALLOWANCE', () =>
      parseTwitterAllowance(env.TWITTER_MONTHLY_ALLOWANCE),
    ),
    availability: parseEnvValue('NETWORK_AVAILABILITY', () => parseAvailability(env.NETWORK_AVAILABILITY)),
  };
}
