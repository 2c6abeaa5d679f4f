import type { TPlatform } from '@sps/core';
import { redisScript, type TRedis } from '@sps/queue';

/**
 * The read budget: metrics reads of a network (and of one account, where the network counts per user) are
 * capped per window to a share of the network's documented rate limit, counted in Redis so every publisher
 * process draws from the same budget. Publishing never draws from it, so what reads leave of the network's
 * limit stays for publishing. Where the network counts for the whole app (YouTube, TikTok, Bluesky), each
 * tenant (the owner account) may take only a share of a window, so one tenant's backlog cannot hold every
 * other tenant's reads for the whole window. One key per command (a script on that key alone), so it runs
 * on a Redis Cluster as on a single Redis.
 */

export interface TReadLimit {
  /** Read calls the network allows in `windowMs` (its documented limit, before the share is taken). */
  limit: number;
  windowMs: number;
  /** `account`: the network counts per user (or token); `network`: per app (or per IP). */
  per: 'account' | 'network';
  /** The page that states the limit. */
  doc?: string;
}

const MIN = 60_000;

/**
 * Each network's documented limit on the read the service makes (the tightest that applies):
 * - X `GET /2/tweets`: 900 requests per 15 minutes per user (https://docs.x.com/x-api/fundamentals/rate-limits).
 * - YouTube: 10,000 quota units a day per project, `videos.list` costs 1
 *   (https://developers.google.com/youtube/v3/getting-started#quota); counted per minute here, as a day's
 *   budget spread evenly (about 7 a minute).
 * - LinkedIn: per-member and per-application daily limits shown in the developer portal only
 *   (https://learn.microsoft.com/en-us/linkedin/shared/api-guide/concepts/rate-limits); 100 a minute
 *   per member is assumed.
 * - TikTok `video/query`: 600 requests per minute (https://developers.tiktok.com/doc/tiktok-api-v2-rate-limit).
 * - Threads, Instagram, Facebook: Graph's platform rate limit, 200 calls per hour per user
 *   (https://developers.facebook.com/docs/graph-api/overview/rate-limiting).
 * - Mastodon: 300 requests per 5 minutes per account (https://docs.joinmastodon.org/api/rate-limits/).
 * - Bluesky: 3,000 requests per 5 minutes per IP on the AppView (https://docs.bsky.app/docs/advanced-guides/rate-limits).
 * - Slack `reactions.get`: Tier 3, 50+ per minute per workspace
 *   (https://docs.slack.dev/reference/methods/reactions.get).
 * - Discord: 50 requests per second per bot (https://discord.com/developers/docs/topics/rate-limits); one
 *   per second is assumed per route here, Discord's per-route buckets being undocumented.
 */
export const DOCUMENTED_READ_LIMITS: Partial<Record<TPlatform, TReadLimit>> = {
  twitter: { limit: 900, windowMs: 15 * MIN, per: 'account' },
  youtube: { limit: 7, windowMs: MIN, per: 'network' },
  linkedin: { limit: 100, windowMs: MIN, per: 'account' },
  tiktok: { limit: 600, windowMs: MIN, per: 'network' },
  threads: { limit: 200, windowMs: 60 * MIN, per: 'account' },
  instagram: { limit: 200, windowMs: 60 * MIN, per: 'account' },
  facebook: { limit: 200, windowMs: 60 * MIN, per: 'account' },
  mastodon: { limit: 300, windowMs: 5 * MIN, per: 'account' },
  bluesky: { limit: 3000, windowMs: 5 * MIN, per: 'network' },
  slack: { limit: 50, windowMs: MIN, per: 'account' },
  discord: { limit: 60, windowMs: MIN, per: 'account' },
};

export interface TReadBudgetConfig {
  /** Share of each documented limit that reads may take (METRICS_READ_SHARE, 0 < share ≤ 1). */
  share: number;
  /**
   * Share of a network-wide cap one tenant may take per window while another tenant reads the network too
   * (METRICS_TENANT_SHARE, 0 < share ≤ 1; at least one read); a tenant alone takes the whole cap. Per-account
   * caps are already one tenant's.
   */
  tenantShare: number;
  /** Per-network limits replacing the documented ones (METRICS_READ_BUDGET); taken whole, no share applied. */
  overrides: Partial<Record<TPlatform, TReadLimit>>;
}

export const DEFAULT_READ_BUDGET: TReadBudgetConfig = { share: 0.5, tenantShare: 0.5, overrides: {} };

export type TTake = { ok: true } | { ok: false; waitMs: number };

export interface TReadBudget {
  /**
   * Takes one read call of `platform` through `socialAccountId`, whose posts belong to `tenantId` (the
   * owner account); when refused, how long until the window turns.
   */
  take(platform: TPlatform, socialAccountId: string, tenantId: string): Promise<TTake>;
}

// Counts one call in the window's key unless it holds the cap already (a refusal counts nothing); the key
// expires with the window. 1: taken, 0: refused.
const TAKE = `local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n >= tonumber(ARGV[2]) then return 0 end
if redis.call('INCR', KEYS[1]) == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return 1`;

// Marks a tenant as reading the network in this window (a set that expires with it); answers how many
// tenants asked in it, this one included.
const ASKED = `redis.call('SADD', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return redis.call('SCARD', KEYS[1])`;

// How many tenants other than ARGV[1] asked in the previous window.
const OTHERS = `local n = redis.call('SCARD', KEYS[1])
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then n = n - 1 end
return n`;

// Gives back a call whose other key refused; a key gone with its window is not made again (it would not expire).
const GIVE_BACK = `if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('DECR', KEYS[1]) end
return 0`;

/** The cap a network's reads get per window, or null where no budget applies. */
export function readCap(platform: TPlatform, config: TReadBudgetConfig): TReadLimit | null {
  const override = config.overrides[platform];
  if (override) return override;
  const documented = DOCUMENTED_READ_LIMITS[platform];
  if (!documented) return null;
  return { ...documented, limit: Math.max(1, Math.floor(documented.limit * config.share)) };
}

/** Reads one tenant may take per window of a network-wide cap: its share, at least one. */
export function tenantReadCap(cap: TReadLimit, config: TReadBudgetConfig): number {
  return Math.max(1, Math.floor(cap.limit * config.tenantShare));
}

// Braces would make a hash tag: each key is used alone, so budgets spread over a cluster's masters.
const untagged = (part: string) => part.replace(/[{}]/g, '');

/** A window's counter: the network's (`all`), one account's, or one tenant's share of the network's. */
export function readBudgetKey(prefix: string, platform: TPlatform, scope: string, window: number): string {
  return `${untagged(prefix)}:metrics-budget:${platform}:${untagged(scope)}:${window}`;
}

export function createReadBudget(redis: TRedis, prefix: string, config: TReadBudgetConfig): TReadBudget {
  // By their hash (EVALSHA), as the lanes' scripts: each key alone, so one key a script.
  const takeSlot = redisScript(redis, TAKE, 1);
  const markAsked = redisScript(redis, ASKED, 1);
  const othersAsked = redisScript(redis, OTHERS, 1);
  const giveBack = redisScript(redis, GIVE_BACK, 1);
  return {
    async take(platform, socialAccountId, tenantId) {
      const cap = readCap(platform, config);
      if (!cap) return { ok: true };
      const now = Date.now();
      const window = Math.floor(now / cap.windowMs);
      const ttl = String(cap.windowMs + 1000);
      const slot = async (key: string, limit: number) =>
        Number(await takeSlot(key, ttl, String(limit))) === 1;
      const refused = { ok: false, waitMs: (window + 1) * cap.windowMs - now } as const;
      if (cap.per === 'account') {
        const taken = await slot(readBudgetKey(prefix, platform, socialAccountId, window), cap.limit);
        return taken ? { ok: true } : refused;
      }
      // The tenant's share first: a tenant past it never touches the shared count. Two keys cannot share a
      // script on a cluster, so the tenant's call is given back when the network's window is full. The share
      // applies only while another tenant asked in this window or the last (a refused ask counts, so a
      // tenant shut out of a full window is seen in the next); a tenant alone reads at the network's cap.
      const tenantKey = readBudgetKey(prefix, platform, `tenant:${tenantId}`, window);
      // Read as "the last window" during the next one too.
      const bothWindows = String(2 * cap.windowMs + 1000);
      const askedNow = Number(
        await markAsked(readBudgetKey(prefix, platform, 'tenants', window), bothWindows, tenantId),
      );
      const shared =
        askedNow > 1 ||
        Number(await othersAsked(readBudgetKey(prefix, platform, 'tenants', window - 1), tenantId)) > 0;
      if (!(await slot(tenantKey, shared ? tenantReadCap(cap, config) : cap.limit))) return refused;
      if (await slot(readBudgetKey(prefix, platform, 'all', window), cap.limit)) return { ok: true };
      await giveBack(tenantKey);
      return refused;
    },
  };
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: MIN, h: 60 * MIN };

/**
 * METRICS_READ_BUDGET: `network=calls/window[:network|account]`, comma-separated (`mastodon=100/5m`,
 * `twitter=300/15m:account`); the scope defaults to the network's documented one.
 */
export function parseReadBudgetOverrides(value: string): Partial<Record<TPlatform, TReadLimit>> {
  const out: Partial<Record<TPlatform, TReadLimit>> = {};
  for (const part of value
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const m = /^([a-z]+)=(\d+)\/(\d+)(ms|s|m|h)(?::(account|network))?$/.exec(part);
    const platform = m?.[1] as TPlatform | undefined;
    const documented = platform ? DOCUMENTED_READ_LIMITS[platform] : undefined;
    if (!m || !platform || !documented) {
      throw new Error(
        `"${part}" is not network=calls/window (e.g. mastodon=100/5m) for a network whose figures are read`,
      );
    }
    const limit = Number(m[2]);
    const windowMs = Number(m[3]) * (UNITS[m[4] ?? 's'] ?? 1000);
    if (limit < 1 || windowMs < 100) throw new Error(`"${part}": at least 1 call per 100 ms window`);
    out[platform] = { limit, windowMs, per: (m[5] as 'account' | 'network' | undefined) ?? documented.per };
  }
  return out;
}
