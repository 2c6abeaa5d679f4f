import type { Got } from 'got';
import type { TConnectorAccount, TConnectorOptions } from './connector.js';
import { chosenHostProblem, createHttpClient, sameOrigin } from './http-client.js';
import {
  figures,
  GONE,
  readFailureOf,
  type TMetricsRead,
  type TMetricsReader,
  type TMetricsRef,
} from './metrics-reader.js';

const NETWORK = 'Bluesky';
const AUTH_ERRORS = new Set(['ExpiredToken', 'InvalidToken', 'AuthenticationRequired', 'AuthMissing']);

/** `uris` of app.bsky.feed.getPosts has `maxLength: 25` (lexicons/app/bsky/feed/getPosts.json). */
export const BLUESKY_METRICS_BATCH = 25;

interface TPostView {
  uri: string;
  likeCount?: number;
  repostCount?: number;
  replyCount?: number;
  quoteCount?: number;
  bookmarkCount?: number;
}

/**
 * Bluesky: one `app.bsky.feed.getPosts?uris=…` per 25 posts through the account's PDS, which proxies it
 * to the AppView ("Authenticated requests are usually made to the user's PDS, with automatic service
 * proxying": https://docs.bsky.app/docs/api/app-bsky-feed-get-posts). A post the AppView no longer has is
 * simply missing from `posts`. Bluesky reports no impressions, views or clicks.
 */
export function createBlueskyMetrics(options: TConnectorOptions): TMetricsReader {
  const timeoutMs = options.timeoutMs ?? 15_000;
  const configured = options.baseUrl ?? 'https://bsky.social';
  const clients = new Map<string, Got>();

  return {
    metricsBatchSize: BLUESKY_METRICS_BATCH,
    async readMetrics(account: TConnectorAccount, refs: TMetricsRef[]) {
      // The same host rules as the connector: a PDS its owner named must still be public HTTPS.
      const base = account.instanceUrl ?? configured;
      const chosenByUser = !sameOrigin(base, configured);
      if (chosenByUser) {
        const problem = chosenHostProblem(base, NETWORK);
        if (problem) return { ok: false, failure: problem };
      }
      let http = clients.get(base);
      if (!http) {
        http = createHttpClient(base, timeoutMs, { chosenByUser });
        clients.set(base, http);
      }
      const uriOf = (ref: TMetricsRef) => ref.meta?.uri ?? ref.remoteId;
      const batch = refs.slice(0, BLUESKY_METRICS_BATCH);
      const searchParams = new URLSearchParams();
      for (const ref of batch) searchParams.append('uris', uriOf(ref));
      let posts: TPostView[];
      try {
        ({ posts } = await http
          .get('xrpc/app.bsky.feed.getPosts', {
            headers: { authorization: `Bearer ${account.token}` },
            searchParams,
          })
          .json<{ posts: TPostView[] }>());
      } catch (error) {
        const hints = {
          network: NETWORK,
          isAuthError: (_s: number, body: unknown) =>
            AUTH_ERRORS.has(String((body as { error?: unknown } | null)?.error)),
        };
        return { ok: false, failure: readFailureOf(error, hints, 'app password (read access)') };
      }
      const byUri = new Map(posts.map((p) => [p.uri, p]));
      const results = new Map<string, TMetricsRead>();
      for (const ref of batch) {
        const view = byUri.get(uriOf(ref));
        results.set(
          ref.remoteId,
          view
            ? {
                figures: figures({
                  likes: view.likeCount,
                  reposts: view.repostCount,
                  replies: view.replyCount,
                  quotes: view.quoteCount,
                  bookmarks: view.bookmarkCount,
                }),
              }
            : { error: GONE(NETWORK) },
        );
      }
      return { ok: true, results };
    },
  };
}
