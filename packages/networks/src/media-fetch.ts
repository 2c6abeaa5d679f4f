import got, { HTTPError } from 'got';
import type { TStep } from './http-client.js';

/** One media item a connector needs as bytes (networks that take uploads rather than URLs). */
export interface TMediaRequest {
  url: string;
  kind: 'image' | 'video';
  /** Network name for messages ("X", "Bluesky"). */
  network: string;
  /** The network's own size limit for this kind: the download is aborted beyond it. */
  maxBytes: number;
}

export interface TFetchedMedia {
  bytes: Buffer;
  /** MIME type of the bytes. */
  type: string;
}

export type TFetchMedia = (request: TMediaRequest) => Promise<TStep<TFetchedMedia>>;

export interface TMediaFetchConfig {
  /** Lets media URLs resolve to loopback or private addresses (`MEDIA_ALLOW_PRIVATE_URLS`, tests only). */
  allowPrivate?: boolean;
  /** Bound on the whole download. */
  timeoutMs?: number;
}

/**
 * The one place connectors download media given by API users. Every connector gets the same fetcher
 * (`TConnectorOptions.fetchMedia`), so the download policy lives here and nowhere else.
 */
export function createMediaFetcher(config: TMediaFetchConfig = {}): TFetchMedia {
  const timeoutMs = config.timeoutMs ?? 15_000;
  return async ({ url, kind, network, maxBytes }) => {
    try {
      const res = await got(url, {
        responseType: 'buffer',
        timeout: { request: timeoutMs },
        retry: { limit: 0 },
      });
      if (res.body.length > maxBytes) {
        return {
          ok: false,
          failure: {
            kind: 'rejected',
            message: `The ${kind} ${url} is larger than ${network} accepts (${maxBytes} bytes). Use a smaller file and retry.`,
          },
        };
      }
      const type = (res.headers['content-type'] ?? 'application/octet-stream').split(';')[0]!.trim();
      return { ok: true, value: { bytes: res.body, type } };
    } catch (err) {
      const status = err instanceof HTTPError ? err.response.statusCode : undefined;
      const permanent = status !== undefined && status < 500;
      return {
        ok: false,
        failure: {
          kind: permanent ? 'rejected' : 'transient',
          ...(status !== undefined ? { status } : {}),
          message: `Could not download the ${kind} ${url} for ${network}${status ? ` (HTTP ${status})` : ''}.${permanent ? ' Fix the media URL and retry.' : ''}`,
        },
      };
    }
  };
}
