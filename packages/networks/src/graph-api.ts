import type { Got } from 'got';
import { HTTPError } from 'got';
import type { TFindOutcome, TNetworkFailure, TProcessingWait, TPublishedProbe } from './connector.js';
import { classifyHttpError } from './http-client.js';
import {
  firstUnclaimed,
  MAX_READ_PAGES,
  readFailure,
  tooMany,
  windowEnd,
  windowStart,
} from './readback-match.js';

// Conventions shared by Meta's Graph APIs (Facebook pages, Instagram, Threads).

/**
 * Facebook and Instagram Graph API version. Each version is served at least two years; v25.0 (February
 * 2026) until July 29, 2028; v21.0 stops on January 21, 2027.
 * https://developers.facebook.com/docs/graph-api/changelog/versions/
 */
export const META_GRAPH_DEFAULT_VERSION = 'v25.0';
/** Threads has its own host and versioning; v1.0 is its only version. https://developers.facebook.com/docs/threads */
export const THREADS_DEFAULT_VERSION = 'v1.0';

/** The versioned base URL: the configured (or real) host, then the version path segment. */
export function graphBaseUrl(baseUrl: string | undefined, realHost: string, version: string): string {
  return `${(baseUrl ?? realHost).replace(/\/+$/, '')}/${encodeURIComponent(version)}`;
}

/**
 * Throttling codes, answered with HTTP 400/403 as often as 429: 4 (app), 17 (user), 32 (page), 613
 * (custom), and 80001–80014 (business use case limits per product).
 * https://developers.facebook.com/docs/graph-api/overview/rate-limiting
 */
const RATE_LIMIT_CODES = new Set([4, 17, 32, 613]);
const isRateLimitCode = (code: number) => RATE_LIMIT_CODES.has(code) || (code >= 80001 && code <= 80014);
/**
 * "Not ready yet" answers to a publish: Instagram's 9007/2207027 "Media ID is not available"
 * (seen in https://github.com/exileum/meta-mcp/issues/138) and
 * Threads' 24/4279009 "Media Not Found" for a container it has not finished (https://github.com/fbsamples/threads_api/issues/70).
 * Nothing was published, so these are transient.
 */
const NOT_READY = [
  { code: 9007, subcode: 2207027 },
  { code: 24, subcode: 4279009 },
];
/** Code 190 (OAuthException): an invalid or expired token, even when answered with HTTP 400. */
const AUTH_CODE = 190;

interface TGraphErrorBody {
  error?: { code?: number; error_subcode?: number };
}

export function graphErrorCode(body: unknown): number | undefined {
  return typeof body === 'object' && body !== null ? (body as TGraphErrorBody).error?.code : undefined;
}
function graphErrorSubcode(body: unknown): number | undefined {
  return typeof body === 'object' && body !== null
    ? (body as TGraphErrorBody).error?.error_subcode
    : undefined;
}

/** Graph announces when throttling ends in minutes, inside JSON usage headers. */
function regainAccessMs(
  headers: Record<string, string | string[] | undefined>,
  usageHeaders: readonly string[],
): number | undefined {
  for (const name of usageHeaders) {
    const raw = headers[name];
    if (typeof raw !== 'string') continue;
    const minutes = [...raw.matchAll(/"estimated_time_to_regain_access"\s*:\s*(\d+)/g)].map((m) =>
      Number(m[1]),
    );
    if (minutes.length > 0) return Math.max(...minutes) * 60_000;
  }
  return undefined;
}

/**
 * A Graph API call's failure: the generic HTTP classification, with code 190 as an expired token, the
 * throttling codes as `rate_limited` (waiting as long as the `usageHeaders` say, when they say) and the
 * "media not ready" codes as `transient`.
 */
export function classifyGraphError(
  err: unknown,
  network: string,
  usageHeaders: readonly string[],
): TNetworkFailure {
  const failure = classifyHttpError(err, {
    network,
    isAuthError: (_status, body) => graphErrorCode(body) === AUTH_CODE,
  });
  if (failure.kind !== 'rejected' || !(err instanceof HTTPError)) return failure;
  const body = err.response.body;
  const code = graphErrorCode(body);
  const subcode = graphErrorSubcode(body);
  if (NOT_READY.some((n) => n.code === code && n.subcode === subcode)) {
    return {
      ...failure,
      kind: 'transient',
      message: `${network} had not finished processing the media (code ${code}/${subcode}). It will be retried automatically.`,
    };
  }
  if (code === undefined || !isRateLimitCode(code)) return failure;
  const after = regainAccessMs(err.response.headers, usageHeaders);
  return {
    ...failure,
    kind: 'rate_limited',
    ...(after !== undefined ? { retryAfterMs: after } : {}),
    message: `${network} rate limit reached (code ${code}). The post will be retried${after !== undefined ? ` in ${Math.ceil(after / 1000)} s` : ' later'}.`,
  };
}

/**
 * Meta asks to query a container's status about once a minute for no more than five minutes.
 * https://developers.facebook.com/docs/threads/troubleshooting#publishing-does-not-return-a-media-id
 * https://developers.facebook.com/docs/instagram-platform/content-publishing#troubleshooting
 */
export const META_CONTAINER_WAIT = { intervalMs: 60_000, maxWaitMs: 5 * 60_000 };

export interface TContainerStatusSpec {
  http: Got;
  headers: Record<string, string>;
  network: string;
  /** Instagram: `status_code` (state) and `status` (detail); Threads: `status` and `error_message`. */
  stateField: 'status_code' | 'status';
  detailField: 'status' | 'error_message';
  wait: TProcessingWait | undefined;
}

export interface TGraphListSearch<T extends { id: string }> {
  http: Got;
  headers: Record<string, string>;
  network: string;
  classify: (error: unknown) => TNetworkFailure;
  /** The list edge, e.g. `{user-id}/threads`. */
  path: string;
  fields: string;
  /** More query parameters of the edge (e.g. the comments edge's `order`). */
  params?: Record<string, string>;
  probe: TPublishedProbe;
  /** Whether an item is the segment that was sent. */
  matches: (item: T) => boolean;
  found: (item: T) => Extract<TFindOutcome, { kind: 'found' }>;
}

/**
 * Reads a Graph list edge newest first within the probe's window (`since`/`until` in Unix seconds, 50 a
 * page, at most three pages) and returns the first item that is the segment and
 * not recorded for another one.
 * https://developers.facebook.com/docs/graph-api/results (cursor and time-based paging)
 */
export async function findInGraphList<T extends { id: string }>(
  search: TGraphListSearch<T>,
): Promise<TFindOutcome> {
  const unix = (d: Date) => Math.floor(d.getTime() / 1000);
  let after: string | undefined;
  let read = 0;
  try {
    for (let page = 0; page < MAX_READ_PAGES; page += 1) {
      const body = await search.http
        .get(search.path, {
          headers: search.headers,
          searchParams: {
            fields: search.fields,
            ...search.params,
            since: unix(windowStart(search.probe)),
            until: unix(windowEnd(search.probe)),
            limit: 50,
            ...(after ? { after } : {}),
          },
        })
        .json<{ data?: T[]; paging?: { cursors?: { after?: string }; next?: string } }>();
      const items = body.data ?? [];
      read += items.length;
      const hit = await firstUnclaimed(search.probe, items.filter(search.matches), (item) => item.id);
      if (hit) return search.found(hit);
      after = body.paging?.cursors?.after;
      if (!body.paging?.next || !after) return { kind: 'absent' };
    }
    return tooMany(search.network, read);
  } catch (error) {
    return readFailure(error, search.classify, search.network);
  }
}
