import {
  emptyFigures,
  METRIC_FIELDS,
  METRICS_HISTORY_LIMIT,
  type TMetricFigures,
  type TMetricSnapshot,
  type TPlatform,
} from '@sps/core';
import type { TDb } from './client.js';

type TRow = Record<(typeof METRIC_FIELDS)[number], bigint | number | null> & {
  platform: TPlatform;
  collected_at: Date;
  error: string | null;
};

function figuresOf(row: TRow): TMetricFigures {
  const out = emptyFigures();
  for (const f of METRIC_FIELDS) out[f] = row[f] === null || row[f] === undefined ? null : Number(row[f]);
  return out;
}

/**
 * Every collection of a post per network, oldest first: the latest METRICS_HISTORY_LIMIT of each (one
 * statement over the (post_id, platform, collected_at DESC) index). The caller has checked the post is the
 * account's; the account id is in the filter as well (tenancy).
 */
export async function postMetricsHistory(
  db: TDb,
  accountId: string,
  postId: string,
): Promise<Map<TPlatform, TMetricSnapshot[]>> {
  const rows = await db.$queryRaw<TRow[]>`
    SELECT platform, collected_at, error, impressions, views, likes, reposts, replies, quotes, bookmarks, clicks
    FROM (
      SELECT *, row_number() OVER (PARTITION BY platform ORDER BY collected_at DESC) AS n
      FROM metric_snapshots
      WHERE post_id = ${postId}::uuid AND account_id = ${accountId}::uuid
    ) latest
    WHERE n <= ${METRICS_HISTORY_LIMIT}
    ORDER BY platform, collected_at ASC`;
  const out = new Map<TPlatform, TMetricSnapshot[]>();
  for (const row of rows) {
    const list = out.get(row.platform) ?? [];
    list.push({
      postId,
      platform: row.platform,
      collectedAt: row.collected_at,
      figures: figuresOf(row),
      error: row.error,
    });
    out.set(row.platform, list);
  }
  return out;
}
