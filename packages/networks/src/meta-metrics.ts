import type { TMetricFigures } from '@sps/core';
import { HTTPError } from 'got';
import type { TConnectorAccount, TConnectorOptions, TNetworkFailure } from './connector.js';
import { classifyGraphError, graphBaseUrl, graphErrorCode, META_GRAPH_DEFAULT_VERSION } from './graph-api.js';
import { createHttpClient } from './http-client.js';
import { figures, GONE, type TMetricsRead, type TMetricsReader, type TMetricsRef } from './metrics-reader.js';

const USAGE_HEADERS = ['x-business-use-case-usage', 'x-app-usage'];
/** Graph's "permission" codes: 10 (not granted), 200-299 (permission errors). */
const isPermissionCode = (code: number | undefined) =>
  code === 10 || (code !== undefined && code >= 200 && code < 300);

interface TMetaSpec {
  network: string;
  realHost: string;
  permission: string;
  /** The path and query of one post's read. */
  request(remoteId: string): { path: string; searchParams: Record<string, string> };
  figuresOf(body: unknown): Partial<TMetricFigures>;
}

/** A Graph API read of one post per call (Facebook and Instagram); code 100 is a post Meta no longer has. */
function createMetaMetrics(spec: TMetaSpec, options: TConnectorOptions): TMetricsReader {
  const http = createHttpClient(
    graphBaseUrl(options.baseUrl, spec.realHost, options.apiVersion ?? META_GRAPH_DEFAULT_VERSION),
    options.timeoutMs ?? 15_000,
  );
  const failureOf = (error: unknown): TNetworkFailure => {
    const failure = classifyGraphError(error, spec.network, USAGE_HEADERS);
    const code = error instanceof HTTPError ? graphErrorCode(error.response.body) : undefined;
    if (failure.kind === 'rejected' && (failure.status === 403 || isPermissionCode(code))) {
      return {
        ...failure,
        message: `${spec.network} refused to read the post's figures: the connection lacks the "${spec.permission}" permission. Reconnect the ${spec.network} account to grant it.`,
      };
    }
    return failure;
  };
  return {
    metricsBatchSize: 1,
    async readMetrics(account: TConnectorAccount, refs: TMetricsRef[]) {
      const results = new Map<string, TMetricsRead>();
      for (const ref of refs.slice(0, 1)) {
        const { path, searchParams } = spec.request(ref.remoteId);
        try {
          const body = await http
            .get(path, { headers: { authorization: `Bearer ${account.token}` }, searchParams })
            .json<unknown>();
          results.set(ref.remoteId, { figures: figures(spec.figuresOf(body)) });
        } catch (error) {
          if (error instanceof HTTPError && graphErrorCode(error.response.body) === 100) {
            results.set(ref.remoteId, { error: GONE(spec.network) });
            continue;
          }
          return { ok: false, failure: failureOf(error) };
        }
      }
      return { ok: true, results };
    },
  };
}

interface TInsightsBody {
  data?: { name: string; values?: { value?: number }[]; total_value?: { value?: number } }[];
}
const insight = (body: unknown, name: string) => {
  const metric = (body as TInsightsBody).data?.find((m) => m.name === name);
  return metric?.total_value?.value ?? metric?.values?.[0]?.value;
};

/**
 * Instagram (Instagram Login): `GET /{ig-media-id}/insights?metric=views,likes,comments,shares,saved`,
 * one media per call, with `instagram_business_manage_insights`
 * (https://developers.facebook.com/docs/instagram-platform/reference/instagram-media/insights). `reach`
 * (unique accounts) is not an impression count and is not shown.
 */
export function createInstagramMetrics(options: TConnectorOptions): TMetricsReader {
  return createMetaMetrics(
    {
      network: 'Instagram',
      realHost: 'https://graph.instagram.com',
      permission: 'instagram_business_manage_insights',
      request: (id) => ({
        path: `${encodeURIComponent(id)}/insights`,
        searchParams: { metric: 'views,likes,comments,shares,saved' },
      }),
      figuresOf: (body) => ({
        views: insight(body, 'views'),
        likes: insight(body, 'likes'),
        replies: insight(body, 'comments'),
        reposts: insight(body, 'shares'),
        bookmarks: insight(body, 'saved'),
      }),
    },
    options,
  );
}

interface TFacebookPost {
  shares?: { count?: number };
  reactions?: { summary?: { total_count?: number } };
  comments?: { summary?: { total_count?: number } };
}

/**
 * Facebook Page posts: `GET /{page-post-id}?fields=shares,reactions.summary(total_count).limit(0),
 * comments.summary(total_count).limit(0)` with the Page token and `pages_read_engagement`, one post per
 * call (https://developers.facebook.com/docs/graph-api/reference/post/, the reactions and comments edges'
 * `summary`). Impressions and clicks need the Page insights (`post_impressions`, `read_insights`), which
 * the connection does not ask for: they stay null.
 */
export function createFacebookMetrics(options: TConnectorOptions): TMetricsReader {
  return createMetaMetrics(
    {
      network: 'Facebook',
      realHost: 'https://graph.facebook.com',
      permission: 'pages_read_engagement',
      request: (id) => ({
        path: encodeURIComponent(id),
        searchParams: {
          fields: 'shares,reactions.summary(total_count).limit(0),comments.summary(total_count).limit(0)',
        },
      }),
      figuresOf: (body) => {
        const post = body as TFacebookPost;
        return {
          likes: post.reactions?.summary?.total_count,
          replies: post.comments?.summary?.total_count,
          // A post nobody shared has no `shares` field at all.
          reposts: post.shares?.count ?? 0,
        };
      },
    },
    options,
  );
}
