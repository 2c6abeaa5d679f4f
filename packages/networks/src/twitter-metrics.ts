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

const NETWORK = 'X';

/** `GET /2/tweets?ids=` takes up to 100 ids (https://docs.x.com/x-api/posts/lookup). */
export const X_METRICS_BATCH = 100;

/**
 * Non-public metrics are only served for the author's own posts, with a user-context token, and "only
 * for Posts that have been created within the last 30 days" (https://developer.x.com/en/docs/twitter-api/metrics).
 * A batch with an older post asks for the public ones only, so one old post does not fail the batch.
 */
const NON_PUBLIC_MAX_AGE_MS = 30 * 86_400_000 - 3_600_000;

interface TTweetMetrics {
  id: string;
  public_metrics?: {
    retweet_count?: number;
    reply_count?: number;
    like_count?: number;
    quote_count?: number;
    bookmark_count?: number;
    impression_count?: number;
  };
  non_public_metrics?: { impression_count?: number; url_link_clicks?: number; user_profile_clicks?: number };
}

interface TLookup {
  data?: TTweetMetrics[];
  /** Partial errors: ids that could not be read (`resource-not-found` for deleted posts). */
  errors?: { resource_id?: string; value?: string; type?: string; title?: string; detail?: string }[];
}

/**
 * X: one `GET /2/tweets?ids=…&tweet.fields=public_metrics,non_public_metrics` per 100 posts with the
 * author's token (scopes `tweet.read` and `users.read`). https://docs.x.com/x-api/posts/lookup,
 * metrics fields: https://developer.x.com/en/docs/twitter-api/metrics
 */
export function createTwitterMetrics(options: TConnectorOptions): TMetricsReader {
  const http = createHttpClient(options.baseUrl ?? 'https://api.x.com', options.timeoutMs ?? 15_000);
  return {
    metricsBatchSize: X_METRICS_BATCH,
    async readMetrics(account: TConnectorAccount, refs: TMetricsRef[]) {
      const ids = refs.slice(0, X_METRICS_BATCH).map((r) => r.remoteId);
      const recent = refs.every((r) => Date.now() - r.publishedAt.getTime() < NON_PUBLIC_MAX_AGE_MS);
      let answer: TLookup;
      try {
        answer = await http
          .get('2/tweets', {
            headers: { authorization: `Bearer ${account.token}` },
            searchParams: {
              ids: ids.join(','),
              'tweet.fields': recent ? 'public_metrics,non_public_metrics' : 'public_metrics',
            },
          })
          .json<TLookup>();
      } catch (error) {
        return { ok: false, failure: readFailureOf(error, { network: NETWORK }, 'tweet.read') };
      }
      const results = new Map<string, TMetricsRead>();
      for (const tweet of answer.data ?? []) {
        const pub = tweet.public_metrics ?? {};
        const priv = tweet.non_public_metrics;
        results.set(tweet.id, {
          figures: figures({
            impressions: priv?.impression_count ?? pub.impression_count,
            likes: pub.like_count,
            reposts: pub.retweet_count,
            replies: pub.reply_count,
            quotes: pub.quote_count,
            bookmarks: pub.bookmark_count,
            clicks: priv?.url_link_clicks,
          }),
        });
      }
      for (const error of answer.errors ?? []) {
        const id = error.resource_id ?? error.value;
        if (!id || results.has(id)) continue;
        results.set(id, {
          error: /not-found|Not Found/i.test(`${error.type} ${error.title}`)
            ? GONE(NETWORK)
            : `X did not return the post's figures: ${error.detail ?? error.title ?? 'no reason given'}`,
        });
      }
      return { ok: true, results };
    },
  };
}
