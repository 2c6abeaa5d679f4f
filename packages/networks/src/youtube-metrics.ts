import { HTTPError } from 'got';
import type { TConnectorAccount, TConnectorOptions } from './connector.js';
import { createHttpClient } from './http-client.js';
import {
  figures,
  GONE,
  readFailureOf,
  type TMetricsRead,
  type TMetricsReader,
  type TMetricsRef,
} from './metrics-reader.js';

const NETWORK = 'YouTube';

/** `videos.list` takes a comma-separated `id` list of up to 50 videos, for 1 quota unit per call. */
export const YOUTUBE_METRICS_BATCH = 50;

interface TVideoStats {
  id: string;
  statistics?: { viewCount?: string; likeCount?: string; favoriteCount?: string; commentCount?: string };
}

const num = (v: string | undefined) => (v === undefined ? undefined : Number(v));

function reasonOf(error: unknown): string | undefined {
  if (!(error instanceof HTTPError)) return undefined;
  const body = error.response.body as { error?: { errors?: { reason?: string }[] } } | undefined;
  return body?.error?.errors?.[0]?.reason;
}

/**
 * YouTube: `GET /youtube/v3/videos?part=statistics&id=…`, 50 videos per call
 * (https://developers.google.com/youtube/v3/docs/videos/list; the statistics fields:
 * https://developers.google.com/youtube/v3/docs/videos#statistics). Views, likes and comments; YouTube
 * reports no reposts, impressions or clicks through the Data API. A video it no longer has is missing from
 * `items`. Private videos need a token with `youtube.readonly` (or `youtube`); `quotaExceeded` (403) is the
 * project's daily quota, read again later.
 */
export function createYoutubeMetrics(options: TConnectorOptions): TMetricsReader {
  const http = createHttpClient(options.baseUrl ?? 'https://www.googleapis.com', options.timeoutMs ?? 15_000);
  return {
    metricsBatchSize: YOUTUBE_METRICS_BATCH,
    async readMetrics(account: TConnectorAccount, refs: TMetricsRef[]) {
      const batch = refs.slice(0, YOUTUBE_METRICS_BATCH);
      let items: TVideoStats[];
      try {
        ({ items = [] } = await http
          .get('youtube/v3/videos', {
            headers: { authorization: `Bearer ${account.token}` },
            searchParams: { part: 'statistics', id: batch.map((r) => r.remoteId).join(','), maxResults: 50 },
          })
          .json<{ items?: TVideoStats[] }>());
      } catch (error) {
        const failure = readFailureOf(error, { network: NETWORK }, 'youtube.readonly');
        if (reasonOf(error) === 'quotaExceeded') {
          return {
            ok: false,
            failure: {
              ...failure,
              kind: 'rate_limited',
              retryAfterMs: 3_600_000,
              message: 'YouTube: the project’s daily API quota is used up; figures are read again later.',
            },
          };
        }
        return { ok: false, failure };
      }
      const byId = new Map(items.map((v) => [v.id, v]));
      const results = new Map<string, TMetricsRead>();
      for (const ref of batch) {
        const stats = byId.get(ref.remoteId)?.statistics;
        results.set(
          ref.remoteId,
          stats
            ? {
                figures: figures({
                  views: num(stats.viewCount),
                  likes: num(stats.likeCount),
                  replies: num(stats.commentCount),
                }),
              }
            : { error: GONE(NETWORK) },
        );
      }
      return { ok: true, results };
    },
  };
}
