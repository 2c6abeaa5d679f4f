import {
  emptyFigures,
  METRIC_FIELDS,
  type TAnalyticsQuery,
  TOP_POSTS_LIMIT,
  type TPlatform,
  type TTopPost,
} from '@sps/core';
import type { TDb } from './client.js';

type TTopRow = Record<(typeof METRIC_FIELDS)[number], bigint | number | string | null> & {
  post_id: string;
  text: string;
  published_at: Date;
  platforms: TPlatform[];
  engagement: bigint | number;
};

/**
 * The account's posts published in the range (same filter as the analytics rows) with at least one
 * collected snapshot, ranked by engagement (core's ENGAGEMENT_FIELDS, as the SQL sums them, of each network's latest error-free
 * snapshot, summed over the networks). Ties: the latest published first, then the id (a stable order).
 */
export async function topPostsOf(db: TDb, accountId: string, query: TAnalyticsQuery): Promise<TTopPost[]> {
  const end = new Date(query.to.getTime() + 86_400_000);
  const platform = query.platform;
  const rows = await db.$queryRaw<TTopRow[]>`
    SELECT p.id AS post_id, left(p.content, 280) AS text, min(t.published_at) AS published_at,
           array_agg(DISTINCT t.platform::text ORDER BY t.platform::text) AS platforms,
           sum(m.impressions) AS impressions, sum(m.views) AS views, sum(m.likes) AS likes,
           sum(m.reposts) AS reposts, sum(m.replies) AS replies, sum(m.quotes) AS quotes,
           sum(m.bookmarks) AS bookmarks, sum(m.clicks) AS clicks,
           coalesce(sum(coalesce(m.likes, 0) + coalesce(m.reposts, 0) + coalesce(m.replies, 0)
             + coalesce(m.quotes, 0) + coalesce(m.bookmarks, 0) + coalesce(m.clicks, 0)), 0) AS engagement
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
    GROUP BY p.id, p.content
    HAVING count(m.collected_at) > 0
    ORDER BY engagement DESC, min(t.published_at) DESC, p.id
    LIMIT ${TOP_POSTS_LIMIT}`;
  return rows.map((r) => {
    const figures = emptyFigures();
    for (const f of METRIC_FIELDS) figures[f] = r[f] === null ? null : Number(r[f]);
    return {
      postId: r.post_id,
      text: r.text,
      publishedAt: r.published_at,
      platforms: r.platforms,
      engagement: Number(r.engagement),
      figures,
    };
  });
}
