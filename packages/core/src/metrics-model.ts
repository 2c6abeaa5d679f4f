import { z } from 'zod';
import { validationError } from './app-error.js';
import { parseDuration } from './duration.js';
import { givenQueryValues } from './list-query-input.js';
import { historyPointB } from './metrics-history.js';
import { PLATFORMS, type TPlatform } from './platforms.js';
import { zodIssues } from './zod-issues.js';

// Engagement figures of published posts (contract, "Engagement"): what a snapshot holds, how the two
// variants show it, and the analytics query. Pure: the collection lives in the publisher.

/** The figures a snapshot may hold; a network that does not report one leaves it null. */
export const METRIC_FIELDS = [
  'impressions',
  'views',
  'likes',
  'reposts',
  'replies',
  'quotes',
  'bookmarks',
  'clicks',
] as const;
export type TMetricField = (typeof METRIC_FIELDS)[number];
export type TMetricFigures = Record<TMetricField, number | null>;

export function emptyFigures(): TMetricFigures {
  return Object.fromEntries(METRIC_FIELDS.map((f) => [f, null])) as TMetricFigures;
}

/** One collection of one post on one network: figures, or what kept them from being read. */
export interface TMetricSnapshot {
  postId: string;
  platform: TPlatform;
  collectedAt: Date;
  figures: TMetricFigures;
  /** Set when the network could not be read: what to do (reconnect, wait, nothing to read). */
  error: string | null;
}

/** What a post shows for one network it was published to (null snapshot: not collected yet). */
export interface TPostMetricsEntry {
  platform: TPlatform;
  snapshot: TMetricSnapshot | null;
  /** Set for networks whose API reports nothing readable (Telegram): shown instead of figures. */
  unreadable: string | null;
  /** Asked for (`?history=true`): every collection, oldest first (metrics-history.ts). */
  history?: TMetricSnapshot[];
}

/** Networks without any readable figure, and why (shown as the network's `error`). */
export const UNREADABLE_METRICS: Partial<Record<TPlatform, string>> = {
  telegram:
    "Telegram's Bot API reports no views, reactions or forwards of a channel message to the bot that sent it; there is nothing to collect.",
};

export function presentPostMetricsB(postId: string, entries: TPostMetricsEntry[]) {
  const platforms: Record<string, unknown> = {};
  for (const entry of entries) {
    const error = entry.unreadable ?? entry.snapshot?.error ?? null;
    const history = entry.history ? { history: entry.history.map(historyPointB) } : {};
    if (error) {
      platforms[entry.platform] = { error, ...history };
      continue;
    }
    platforms[entry.platform] = {
      collected_at: entry.snapshot?.collectedAt.toISOString() ?? null,
      ...(entry.snapshot?.figures ?? emptyFigures()),
      ...history,
    };
  }
  return { post_id: postId, platforms };
}

/** Variant A: camelCase keys, `collectedAt`. */
export function presentPostMetricsA(postId: string, entries: TPostMetricsEntry[]) {
  const b = presentPostMetricsB(postId, entries);
  const platforms: Record<string, unknown> = {};
  for (const [platform, value] of Object.entries(b.platforms)) {
    const { collected_at, history, ...rest } = value as Record<string, unknown>;
    const points = Array.isArray(history)
      ? {
          history: history.map((point: Record<string, unknown>) => {
            const { collected_at: at, ...figures } = point;
            return { collectedAt: at, ...figures };
          }),
        }
      : {};
    platforms[platform] =
      'error' in rest ? { ...rest, ...points } : { collectedAt: collected_at, ...rest, ...points };
  }
  return { success: true, postId, platforms };
}

// ---- Collection schedule ----

/** `METRICS_COLLECT_AFTER`: durations after publishing, ascending, distinct, at most 20, none above a year. */
export function parseCollectAfter(input: string): number[] {
  const items = input
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (items.length === 0) throw new Error('give at least one duration, e.g. 1h,6h,24h');
  if (items.length > 20) throw new Error('at most 20 collection times');
  const ms = items.map((item) => parseDuration(item));
  for (const value of ms) {
    if (value < 1000) throw new Error('each collection time must be at least 1s after publishing');
    if (value > 366 * 86_400_000) throw new Error('each collection time must be within 366d of publishing');
  }
  return [...new Set(ms)].sort((a, b) => a - b);
}

export const DEFAULT_COLLECT_AFTER = '1h,6h,24h,3d,7d,30d';

// ---- Analytics ----

export const MAX_ANALYTICS_DAYS = 366;
const DAY_MS = 86_400_000;

const DAY_ERROR = 'must be a date (YYYY-MM-DD) or an ISO 8601 date-time';
const isCalendarDay = (s: string) =>
  !Number.isNaN(Date.parse(`${s}T00:00:00Z`)) && new Date(`${s}T00:00:00Z`).toISOString().startsWith(s);

/**
 * A UTC day: `YYYY-MM-DD`, or an ISO 8601 date-time with its offset (the UTC day it falls on), as
 * `scheduled_for` is written elsewhere in the API. Normalised to `YYYY-MM-DD`.
 */
const ZDay = z
  .string({ error: DAY_ERROR })
  .max(40, { error: DAY_ERROR })
  .transform((s, ctx) => {
    if (/^\d{4}-\d{2}-\d{2}$/.test(s)) {
      if (isCalendarDay(s)) return s;
      ctx.addIssue({ code: 'custom', message: 'is not a calendar date' });
      return z.NEVER;
    }
    const dateTime = z.iso.datetime({ offset: true }).safeParse(s);
    if (dateTime.success && isCalendarDay(s.slice(0, 10))) return new Date(s).toISOString().slice(0, 10);
    ctx.addIssue({ code: 'custom', message: DAY_ERROR });
    return z.NEVER;
  });

/** The query `GET /v1/analytics` parses (also the OpenAPI document's parameters). */
export const ZAnalyticsQuery = z
  .object({
    from: ZDay.optional().meta({ description: 'First day, YYYY-MM-DD (UTC); default 29 days before `to`.' }),
    to: ZDay.optional().meta({
      description: 'Last day, YYYY-MM-DD (UTC), inclusive; default today. At most 366 days after `from`.',
    }),
    platform: z
      .enum(PLATFORMS, { error: `must be one of ${PLATFORMS.join(', ')}` })
      .optional()
      .meta({ description: 'Only this network.' }),
  })
  .strict();

export interface TAnalyticsQuery {
  /** First day (UTC midnight), inclusive. */
  from: Date;
  /** Last day (UTC midnight), inclusive. */
  to: Date;
  platform: TPlatform | null;
}

/**
 * `from`/`to` are UTC days, both inclusive; without them the last 30 days up to today. A range runs
 * forwards and spans at most MAX_ANALYTICS_DAYS days (one row per day is answered).
 */
export function parseAnalyticsQuery(query: Record<string, unknown>, now: Date): TAnalyticsQuery {
  const clean = givenQueryValues(query);
  for (const key of ['from', 'to', 'platform']) {
    if (Array.isArray(clean[key])) throw validationError([{ field: key, message: 'must be given once' }]);
  }
  const parsed = ZAnalyticsQuery.safeParse(clean);
  if (!parsed.success) throw validationError(zodIssues(parsed.error));
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const to = parsed.data.to ? Date.parse(`${parsed.data.to}T00:00:00Z`) : today;
  const from = parsed.data.from ? Date.parse(`${parsed.data.from}T00:00:00Z`) : to - 29 * DAY_MS;
  if (from > to) throw validationError([{ field: 'from', message: 'must not be after to' }]);
  const days = (to - from) / DAY_MS + 1;
  if (days > MAX_ANALYTICS_DAYS) {
    throw validationError([
      { field: 'to', message: `the range spans ${days} days; at most ${MAX_ANALYTICS_DAYS} are answered` },
    ]);
  }
  return { from: new Date(from), to: new Date(to), platform: parsed.data.platform ?? null };
}

/** One UTC day of analytics: posts published that day and the latest figures of each (summed). */
export interface TAnalyticsDay {
  /** `YYYY-MM-DD`. */
  date: string;
  posts: number;
  figures: TMetricFigures;
}

/** Interactions (reach, i.e. impressions and views, is not engagement): what ranks the top posts. */
export const ENGAGEMENT_FIELDS = ['likes', 'reposts', 'replies', 'quotes', 'bookmarks', 'clicks'] as const;

/** How many top posts an analytics answer lists. */
export const TOP_POSTS_LIMIT = 5;

/** A post of the range ranked by engagement: its latest figures summed over its networks. */
export interface TTopPost {
  postId: string;
  /** The post's text, cut to 280 characters. */
  text: string;
  /** The first time it was published on one of its networks. */
  publishedAt: Date;
  platforms: TPlatform[];
  engagement: number;
  figures: TMetricFigures;
}

export interface TAnalytics {
  query: TAnalyticsQuery;
  /** At most TOP_POSTS_LIMIT posts with collected figures, most engagement first. */
  topPosts: TTopPost[];
  /** Sparse: days with published posts only (the presenter fills the rest). */
  days: TAnalyticsDay[];
  /** Per network over the whole range. */
  byPlatform: Partial<Record<TPlatform, { posts: number; figures: TMetricFigures }>>;
  /** The whole range: distinct posts and the sums of their latest figures. */
  totals: { posts: number; figures: TMetricFigures };
}

const dayKey = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** Every day of the range in order, zeros where nothing was published (one row per day). */
function everyDay(analytics: TAnalytics): TAnalyticsDay[] {
  const byDate = new Map(analytics.days.map((d) => [d.date, d]));
  const out: TAnalyticsDay[] = [];
  for (let t = analytics.query.from.getTime(); t <= analytics.query.to.getTime(); t += DAY_MS) {
    const date = dayKey(t);
    out.push(byDate.get(date) ?? { date, posts: 0, figures: emptyFigures() });
  }
  return out;
}

export function presentAnalyticsB(analytics: TAnalytics) {
  const days = everyDay(analytics);
  return {
    from: dayKey(analytics.query.from.getTime()),
    to: dayKey(analytics.query.to.getTime()),
    platform: analytics.query.platform,
    totals: { posts: analytics.totals.posts, ...analytics.totals.figures },
    platforms: Object.fromEntries(
      Object.entries(analytics.byPlatform).map(([p, v]) => [p, { posts: v.posts, ...v.figures }]),
    ),
    days: days.map((d) => ({ date: d.date, posts: d.posts, ...d.figures })),
    top_posts: analytics.topPosts.map((p) => ({
      post_id: p.postId,
      text: p.text,
      published_at: p.publishedAt.toISOString(),
      platforms: p.platforms,
      engagement: p.engagement,
      ...p.figures,
    })),
  };
}

/** Variant A: the same figures under camelCase keys (they are single words) with `success`. */
export function presentAnalyticsA(analytics: TAnalytics) {
  const { top_posts, ...b } = presentAnalyticsB(analytics);
  return {
    success: true,
    ...b,
    topPosts: top_posts.map(({ post_id, published_at, ...rest }) => ({
      postId: post_id,
      publishedAt: published_at,
      ...rest,
    })),
  };
}
