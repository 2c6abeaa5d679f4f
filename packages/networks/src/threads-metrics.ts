import { HTTPError } from 'got';
import type { TConnectorAccount, TConnectorOptions } from './connector.js';
import { classifyGraphError, graphBaseUrl, graphErrorCode, THREADS_DEFAULT_VERSION } from './graph-api.js';
import { createHttpClient } from './http-client.js';
import { figures, GONE, type TMetricsRead, type TMetricsReader, type TMetricsRef } from './metrics-reader.js';

const NETWORK = 'Threads';
const METRICS = ['views', 'likes', 'replies', 'reposts', 'quotes', 'shares'] as const;

interface TInsights {
  data?: { name: string; values?: { value?: number }[]; total_value?: { value?: number } }[];
}

/**
 * Threads: `GET /{threads-media-id}/insights?metric=views,likes,replies,reposts,quotes,shares`, one post
 * per call (the insights edge takes one media id), with `threads_basic` and `threads_manage_insights`
 * (https://developers.facebook.com/documentation/threads/insights). `shares` has no field of its own here
 * and is counted with reposts. A post Threads no longer has answers code 100: gone.
 */
export function createThreadsMetrics(options: TConnectorOptions): TMetricsReader {
  const http = createHttpClient(
    graphBaseUrl(options.baseUrl, 'https://graph.threads.net', options.apiVersion ?? THREADS_DEFAULT_VERSION),
    options.timeoutMs ?? 15_000,
  );
  return {
    metricsBatchSize: 1,
    async readMetrics(account: TConnectorAccount, refs: TMetricsRef[]) {
      const results = new Map<string, TMetricsRead>();
      for (const ref of refs.slice(0, 1)) {
        let answer: TInsights;
        try {
          answer = await http
            .get(`${encodeURIComponent(ref.remoteId)}/insights`, {
              headers: { authorization: `Bearer ${account.token}` },
              searchParams: { metric: METRICS.join(',') },
            })
            .json<TInsights>();
        } catch (error) {
          if (error instanceof HTTPError && graphErrorCode(error.response.body) === 100) {
            results.set(ref.remoteId, { error: GONE(NETWORK) });
            continue;
          }
          const failure = classifyGraphError(error, NETWORK, ['x-business-use-case-usage', 'x-app-usage']);
          if (
            failure.kind === 'rejected' &&
            (failure.status === 403 || graphErrorCode((error as HTTPError).response?.body) === 10)
          ) {
            return {
              ok: false,
              failure: {
                ...failure,
                message: `Threads refused to read the post's insights: the connection lacks the "threads_manage_insights" permission. Reconnect the Threads account to grant it.`,
              },
            };
          }
          return { ok: false, failure };
        }
        const value = (name: string) => {
          const metric = answer.data?.find((m) => m.name === name);
          return metric?.total_value?.value ?? metric?.values?.[0]?.value;
        };
        const reposts = value('reposts');
        const shares = value('shares');
        results.set(ref.remoteId, {
          figures: figures({
            views: value('views'),
            likes: value('likes'),
            replies: value('replies'),
            reposts:
              reposts === undefined && shares === undefined ? undefined : (reposts ?? 0) + (shares ?? 0),
            quotes: value('quotes'),
          }),
        });
      }
      return { ok: true, results };
    },
  };
}
