import { type Got, HTTPError } from 'got';
import type { TConnectorAccount, TConnectorOptions, TNetworkFailure } from './connector.js';
import { mastodonClientFor } from './mastodon-instance.js';
import {
  figures,
  GONE,
  readFailureOf,
  type TMetricsRead,
  type TMetricsReader,
  type TMetricsRef,
} from './metrics-reader.js';

const NETWORK = 'Mastodon';

/**
 * Statuses asked for in one `GET /api/v1/statuses?id[]=…` ("View multiple statuses", Mastodon 4.3+:
 * https://docs.joinmastodon.org/methods/statuses/#index). The page does not state a maximum; 20 is the
 * size of Mastodon's own status pages and what its server code accepts at most.
 */
export const MASTODON_METRICS_BATCH = 20;

interface TStatusCounts {
  id: string;
  favourites_count?: number;
  reblogs_count?: number;
  replies_count?: number;
  quotes_count?: number;
}

const countsOf = (s: TStatusCounts): TMetricsRead => ({
  figures: figures({
    likes: s.favourites_count,
    reposts: s.reblogs_count,
    replies: s.replies_count,
    quotes: s.quotes_count,
  }),
});

/** Mastodon announces the reset of a rate limit as an ISO time in `x-ratelimit-reset`. */
function failureOf(error: unknown): TNetworkFailure {
  const failure = readFailureOf(error, { network: NETWORK }, 'read:statuses');
  if (failure.kind === 'rate_limited' && failure.retryAfterMs === undefined && error instanceof HTTPError) {
    const raw = error.response.headers['x-ratelimit-reset'];
    const reset = Date.parse(Array.isArray(raw) ? (raw[0] ?? '') : (raw ?? ''));
    if (Number.isFinite(reset)) return { ...failure, retryAfterMs: Math.max(0, reset - Date.now()) };
  }
  return failure;
}

const isStatus = (error: unknown, status: number) =>
  error instanceof HTTPError && error.response.statusCode === status;

/**
 * Mastodon: favourites, boosts, replies (and quotes on 4.5+) of the account's statuses on its own
 * instance, 20 per call; an instance older than 4.3 has no multiple-status read (404), so each status is
 * read on its own (`GET /api/v1/statuses/:id`, https://docs.joinmastodon.org/methods/statuses/#get).
 * Scope `read:statuses`. Mastodon reports no impressions, views, bookmarks of others, or clicks.
 */
export function createMastodonMetrics(options: TConnectorOptions): TMetricsReader {
  const timeoutMs = options.timeoutMs ?? 15_000;
  const clients = new Map<string, Got>();

  return {
    metricsBatchSize: MASTODON_METRICS_BATCH,
    async readMetrics(account: TConnectorAccount, refs: TMetricsRef[]) {
      const client = mastodonClientFor(account, options, clients, timeoutMs);
      if (!client.ok) return client;
      const { http } = client.value;
      const headers = { authorization: `Bearer ${account.token}` };
      const batch = refs.slice(0, MASTODON_METRICS_BATCH);
      const results = new Map<string, TMetricsRead>();
      const searchParams = new URLSearchParams();
      for (const ref of batch) searchParams.append('id[]', ref.remoteId);
      try {
        const statuses = await http.get('api/v1/statuses', { headers, searchParams }).json<TStatusCounts[]>();
        for (const status of statuses) results.set(status.id, countsOf(status));
        // "There can be fewer records than requested if the requested statuses do not exist."
        for (const ref of batch)
          if (!results.has(ref.remoteId)) results.set(ref.remoteId, { error: GONE(NETWORK) });
        return { ok: true, results };
      } catch (error) {
        if (!isStatus(error, 404)) return { ok: false, failure: failureOf(error) };
      }
      for (const ref of batch) {
        try {
          const status = await http
            .get(`api/v1/statuses/${encodeURIComponent(ref.remoteId)}`, { headers })
            .json<TStatusCounts>();
          results.set(ref.remoteId, countsOf(status));
        } catch (error) {
          if (isStatus(error, 404)) results.set(ref.remoteId, { error: GONE(NETWORK) });
          else return { ok: false, failure: failureOf(error) };
        }
      }
      return { ok: true, results };
    },
  };
}
