import type { TConnectorAccount, TConnectorOptions } from './connector.js';
import { createHttpClient } from './http-client.js';
import { figures, GONE, type TMetricsRead, type TMetricsReader, type TMetricsRef } from './metrics-reader.js';
import { classify, NETWORK, type TEnvelope, unwrap } from './tiktok-api.js';

/** "Number of video ids should not be larger than 20 at a time" (video query). */
export const TIKTOK_METRICS_BATCH = 20;

interface TVideo {
  id: string;
  like_count?: number;
  comment_count?: number;
  share_count?: number;
  view_count?: number;
}

/**
 * TikTok: `POST /v2/video/query/?fields=id,like_count,comment_count,share_count,view_count` with
 * `filters.video_ids` (at most 20, the creator's own videos), scope `video.list`
 * (https://developers.tiktok.com/doc/tiktok-api-v2-video-query; v1's page states the 20-id bound:
 * https://developers.tiktok.com/doc/tiktok-api-v1-video-query). A post whose public id TikTok had not given
 * yet (its remote id is still the publish id) cannot be read. A video not returned is gone or not the
 * creator's any more.
 */
export function createTiktokMetrics(options: TConnectorOptions): TMetricsReader {
  const http = createHttpClient(
    options.baseUrl ?? 'https://open.tiktokapis.com',
    options.timeoutMs ?? 15_000,
  );
  return {
    metricsBatchSize: TIKTOK_METRICS_BATCH,
    async readMetrics(account: TConnectorAccount, refs: TMetricsRef[]) {
      const batch = refs.slice(0, TIKTOK_METRICS_BATCH);
      const results = new Map<string, TMetricsRead>();
      const readable = batch.filter((r) => /^\d+$/.test(r.remoteId));
      for (const ref of batch) {
        if (!readable.includes(ref)) {
          results.set(ref.remoteId, {
            error: 'TikTok had not made the video public when it was published; it has no figures to read.',
          });
        }
      }
      if (readable.length === 0) return { ok: true, results };
      let videos: TVideo[];
      try {
        const body = await http
          .post('v2/video/query/', {
            headers: { authorization: `Bearer ${account.token}` },
            searchParams: { fields: 'id,like_count,comment_count,share_count,view_count' },
            json: { filters: { video_ids: readable.map((r) => r.remoteId) } },
          })
          .json<TEnvelope<{ videos?: TVideo[] }>>();
        videos = unwrap(body).videos ?? [];
      } catch (error) {
        const failure = classify(error);
        if (failure.kind === 'auth_expired' && /scope_not_authorized/.test(failure.body ?? '')) {
          return {
            ok: false,
            failure: {
              ...failure,
              kind: 'rejected',
              message: `${NETWORK} refused to read the videos: the connection lacks the "video.list" permission. Reconnect the TikTok account to grant it.`,
            },
          };
        }
        return { ok: false, failure };
      }
      const byId = new Map(videos.map((v) => [String(v.id), v]));
      for (const ref of readable) {
        const v = byId.get(ref.remoteId);
        results.set(
          ref.remoteId,
          v
            ? {
                figures: figures({
                  views: v.view_count,
                  likes: v.like_count,
                  replies: v.comment_count,
                  reposts: v.share_count,
                }),
              }
            : { error: GONE(NETWORK) },
        );
      }
      return { ok: true, results };
    },
  };
}
