import {
  emptyFigures,
  METRIC_FIELDS,
  type TAnalytics,
  type TAnalyticsQuery,
  type TMetricFigures,
  type TMetricSnapshot,
  type TPlatform,
  type TPostMetricsEntry,
  UNREADABLE_METRICS,
} from '@sps/core';
import type { TDb } from './client.js';
import { postMetricsHistory } from './metrics-history.js';
import { topPostsOf } from './metrics-top-posts.js';

/** A published post on one network that metrics can be read for. */
export interface TMetricTarget {
  postId: string;
  accountId: string;
  platform: TPlatform;
  socialAccountId: string;
  remotePostId: string;
  /** Extra ids of the main segment (Bluesky `uri`/`cid`). */
  remoteMeta: Record<string, string> | null;
  publishedAt: Date;
}

/** A connected account with published posts whose collection is due, and the earliest due time. */
export interface TDueAccount {
  socialAccountId: string;
  platform: TPlatform;
  dueAt: Date;
}

export interface TSnapshotInput {
  accountId: string;
  postId: string;
  platform: TPlatform;
  figures: TMetricFigures | null;
  error: string | null;
  collectedAt?: Date;
}

type TFigureRow = Record<(typeof METRIC_FIELDS)[number], bigint | number | string | null>;

function figuresOf(row: TFigureRow): TMetricFigures {
  const out = emptyFigures();
  for (const f of METRIC_FIELDS) {
    const v = row[f];
    out[f] = v === null || v === undefined ? null : Number(v);
  }
  return out;
}

const toBig = (v: number | null) => (v === null ? null : BigInt(Math.max(0, Math.trunc(v))));

interface TTargetRow {
  post_id: string;
  account_id: string;
  platform: TPlatform;
  social_account_id: string;
  remote_post_id: string;
  remote_meta: Record<string, string> | null;
  published_at: Date;
}

const toTarget = (r: TTargetRow): TMetricTarget => ({
  postId: r.post_id,
  accountId: r.account_id,
  platform: r.platform,
  socialAccountId: r.social_account_id,
  remotePostId: r.remote_post_id,
  remoteMeta: r.remote_meta,
  publishedAt: r.published_at,
});

/**
 * Metric snapshots: written by the publisher's metrics worker, read by the API. Every API read takes the
 * account id (tenancy); the worker's reads take ids from job payloads.
 */
export function createMetricsRepository(db: TDb) {
  return {
    /** Null when the post is not the account's; otherwise each network it was published to, with its latest snapshot. */
    async postMetrics(
      accountId: string,
      postId: string,
      options: { history?: boolean } = {},
    ): Promise<TPostMetricsEntry[] | null> {
      const post = await db.post.findFirst({
        where: { id: postId, accountId, deletedAt: null },
        select: { targets: { where: { status: 'succeeded' }, select: { platform: true } } },
      });
      if (!post) return null;
      const latest = await db.$queryRaw<
        (TFigureRow & { platform: TPlatform; collected_at: Date; error: string | null })[]
      >`
        SELECT DISTINCT ON (platform) platform, collected_at, error, impressions, views, likes, reposts, replies,
               quotes, bookmarks, clicks
        FROM metric_snapshots
        WHERE post_id = ${postId}::uuid AND account_id = ${accountId}::uuid
        ORDER BY platform, collected_at DESC`;
      const byPlatform = new Map(latest.map((r) => [r.platform, r]));
      const history = options.history ? await postMetricsHistory(db, accountId, postId) : null;
      return post.targets.map(({ platform }) => {
        const row = byPlatform.get(platform);
        const snapshot: TMetricSnapshot | null = row
          ? { postId, platform, collectedAt: row.collected_at, figures: figuresOf(row), error: row.error }
          : null;
        return {
          platform,
          snapshot,
          unreadable: UNREADABLE_METRICS[platform] ?? null,
          ...(history ? { history: history.get(platform) ?? [] } : {}),
        };
      });
    },

    async record(rows: TSnapshotInput[]): Promise<void> {
      if (rows.length === 0) return;
      await db.metricSnapshot.createMany({
        data: rows.map((r) => ({
          accountId: r.accountId,
          postId: r.postId,
          platform: r.platform,
          ...(r.collectedAt ? { collectedAt: r.collectedAt } : {}),
          error: r.error,
          ...Object.fromEntries(METRIC_FIELDS.map((f) => [f, toBig(r.figures?.[f] ?? null)])),
        })),
      });
    },

    /** A connected account with its sealed credentials, for the metrics worker (null: gone). */
    readAccount(socialAccountId: string) {
      return db.socialAccount.findUnique({
        where: { id: socialAccountId },
        select: {
          id: true,
          platform: true,
          accountName: true,
          externalId: true,
          instanceUrl: true,
          credentialsEncrypted: true,
          isActive: true,
          // The stored grant: the permission guard checks the read's scopes before it is sent.
          grantedScopes: true,
        },
      });
    },

    /** Whether the post is the account's and has a network it was published to (refresh). */
    async publishedPost(accountId: string, postId: string): Promise<boolean | null> {
      const post = await db.post.findFirst({
        where: { id: postId, accountId, deletedAt: null },
        select: { targets: { where: { status: 'succeeded' }, select: { id: true } } },
      });
      return post ? post.targets.length > 0 : null;
    },

    /** A post's published networks (refresh collects them all now). */
    async targetsOfPost(postId: string): Promise<TMetricTarget[]> {
      const rows = await db.$queryRaw<TTargetRow[]>`
        SELECT t.post_id, p.account_id, t.platform, t.social_account_id, t.remote_post_id, s.remote_meta, t.published_at
        FROM post_targets t
        JOIN posts p ON p.id = t.post_id
        LEFT JOIN segment_deliveries s ON s.post_id = t.post_id AND s.platform = t.platform AND s.segment_index = 0
        WHERE t.post_id = ${postId}::uuid AND t.status = 'succeeded' AND t.remote_post_id IS NOT NULL
          AND t.social_account_id IS NOT NULL AND t.published_at IS NOT NULL AND p.deleted_at IS NULL`;
      return rows.map(toTarget);
    },

    /**
     * Connected accounts having a published post whose next collection time (`published_at` plus one of
     * `offsetsMs`) has passed with no snapshot since; oldest due first, at most `limit`. Posts published
     * more than the last offset plus `graceMs` ago are not looked at.
     */
    async dueAccounts(
      offsetsMs: number[],
      graceMs: number,
      limit: number,
      now = new Date(),
    ): Promise<TDueAccount[]> {
      const horizon = new Date(now.getTime() - Math.max(...offsetsMs) - graceMs);
      const rows = await db.$queryRaw<{ social_account_id: string; platform: TPlatform; due_at: Date }[]>`
        SELECT t.social_account_id, t.platform, min(d.due_at) AS due_at
        FROM post_targets t
        JOIN posts p ON p.id = t.post_id AND p.deleted_at IS NULL
        CROSS JOIN LATERAL (
          SELECT max(t.published_at + o * interval '1 millisecond') AS due_at
          FROM unnest(${offsetsMs}::bigint[]) AS o
          WHERE t.published_at + o * interval '1 millisecond' <= ${now}
        ) d
        WHERE t.status = 'succeeded' AND t.published_at > ${horizon} AND t.published_at <= ${now}
          AND t.remote_post_id IS NOT NULL AND t.social_account_id IS NOT NULL AND d.due_at IS NOT NULL
          AND NOT EXISTS (
            SELECT 1 FROM metric_snapshots m
            WHERE m.post_id = t.post_id AND m.platform = t.platform AND m.collected_at >= d.due_at)
        GROUP BY t.social_account_id, t.platform
        ORDER BY min(d.due_at)
        LIMIT ${limit}`;
      return rows.map((r) => ({
        socialAccountId: r.social_account_id,
        platform: r.platform,
        dueAt: r.due_at,
      }));
    },

    /** One account's due targets (as `dueAccounts` defines due), oldest due first, at most `limit`. */
    async dueTargets(
      socialAccountId: string,
      offsetsMs: number[],
      graceMs: number,
      limit: number,
      now = new Date(),
    ): Promise<TMetricTarget[]> {
      const horizon = new Date(now.getTime() - Math.max(...offsetsMs) - graceMs);
      const rows = await db.$queryRaw<TTargetRow[]>`
        SELECT t.post_id, p.account_id, t.platform, t.social_account_id, t.remote_post_id, s.remote_meta, t.published_at
        FROM post_targets t
        JOIN posts p ON p.id = t.post_id
        LEFT JOIN segment_deliveries s ON s.post_id = t.post_id AND s.platform = t.platform AND s.segment_index = 0
        CROSS JOIN LATERAL (
          SELECT max(t.published_at + o * interval '1 millisecond') AS due_at
          FROM unnest(${offsetsMs}::bigint[]) AS o
          WHERE t.published_at + o * interval '1 millisecond' <= ${now}
        ) d
        WHERE t.social_account_id = ${socialAccountId}::uuid AND t.status = 'succeeded'
          AND t.published_at > ${horizon} AND t.published_at <= ${now}
          AND t.remote_post_id IS NOT NULL AND d.due_at IS NOT NULL AND p.deleted_at IS NULL
          AND NOT EXISTS (
            SELECT 1 FROM metric_snapshots m
            WHERE m.post_id = t.post_id AND m.platform = t.platform AND m.collected_at >= d.due_at)
        ORDER BY d.due_at, t.post_id
        LIMIT ${limit}`;
      return rows.map(toTarget);
    },

    /**
     * Analytics over the account's posts published in [from, to] (UTC days, inclusive): per day and per
     * network, the number of published posts and the sum of each one's latest figures.
     */
    async analytics(accountId: string, query: TAnalyticsQuery): Promise<TAnalytics> {
      const end = new Date(query.to.getTime() + 86_400_000);
      const platform = query.platform;
      // One statement, four groupings: per day, per network, and the whole range (null day and network);
      // `posts` counts distinct posts, so a post published to three networks counts once in a day's row.
      const rows = await db.$queryRaw<
        (TFigureRow & { day: string | null; platform: TPlatform | null; posts: bigint })[]
      >`
        SELECT to_char(t.published_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, t.platform,
               count(DISTINCT p.id) AS posts,
               sum(m.impressions) AS impressions, sum(m.views) AS views, sum(m.likes) AS likes,
               sum(m.reposts) AS reposts, sum(m.replies) AS replies, sum(m.quotes) AS quotes,
               sum(m.bookmarks) AS bookmarks, sum(m.clicks) AS clicks
        FROM posts p
        JOIN post_targets t ON t.post_id = p.id
        LEFT JOIN LATERAL (
          SELECT * FROM metric_snapshots m
          WHERE m.post_id = t.post_id AND m.platform = t.platform AND m.error IS NULL
          ORDER BY m.collected_at DESC LIMIT 1
        ) m ON true
        WHERE p.account_id = ${accountId}::uuid AND p.deleted_at IS NULL AND t.status = 'succeeded'
          AND t.published_at >= ${query.from} AND t.published_at < ${end}
          AND (${platform}::text IS NULL OR t.platform::text = ${platform}::text)
        GROUP BY GROUPING SETS ((day), (t.platform), ())
        ORDER BY day, t.platform`;
      const byPlatform: TAnalytics['byPlatform'] = {};
      const days: TAnalytics['days'] = [];
      let totals = { posts: 0, figures: emptyFigures() };
      for (const row of rows) {
        const entry = { posts: Number(row.posts), figures: figuresOf(row) };
        if (row.day !== null) days.push({ date: row.day, ...entry });
        else if (row.platform !== null) byPlatform[row.platform] = entry;
        else totals = entry;
      }
      return { query, byPlatform, days, totals, topPosts: await topPostsOf(db, accountId, query) };
    },
  };
}

export type TMetricsRepository = ReturnType<typeof createMetricsRepository>;
