import type { TDownloadPolicy } from '@sps/safe-fetch';
import type { TStep } from './http-client.js';
import type { TSpoolBudget } from './spool-budget.js';

// The media fetcher's shapes (media-fetch.ts): what a connector asks for and gets, and how it is configured.

/** One media item a connector needs as bytes (networks that take uploads rather than URLs). */
export interface TMediaRequest {
  url: string;
  kind: 'image' | 'video';
  /** Network name for messages ("X", "Bluesky"). */
  network: string;
  /**
   * The network's own size limit for this kind. A video is aborted beyond it; an image is downloaded
   * up to the source cap (`TMediaFetchConfig.sourceImageMaxBytes`) and re-encoded until it fits.
   */
  maxBytes: number;
  /**
   * MIME types the network takes for this kind (e.g. `['image/jpeg', 'image/png']`); missing means any
   * image or video type the fetcher recognises. An image of another type is converted to JPEG (or WebP).
   */
  accept?: readonly string[];
  /**
   * The connected account the download is for: a spooled video counts against its share of the spool
   * budget (`TMediaFetchConfig.spoolBudget`). Absent: counted under one shared name.
   */
  account?: string;
}

export interface TFetchedMedia {
  bytes: Buffer;
  /** MIME type of the bytes (from their magic numbers, not from the server's Content-Type). */
  type: string;
  /** True when the bytes were re-encoded to fit `maxBytes` or `accept` (alt text stays the connector's). */
  reencoded?: boolean;
}

/**
 * A video written to a temporary file as it downloads (or as it is read from the media store), never held
 * whole in memory: every connector that uploads videos sends it from there in its network's pieces
 * (chunked-upload.ts, facebook-video.ts). `dispose` removes the file; call it once the upload is over.
 */
export interface TSpooledMedia {
  path: string;
  size: number;
  type: string;
  dispose(): Promise<void>;
}

/**
 * The fetcher; `toFile` downloads a video to a temporary file under the same policy (address, redirects,
 * size, type, time). Absent on fetchers that do not offer it (a connector then takes the bytes).
 */
export type TFetchMedia = ((request: TMediaRequest) => Promise<TStep<TFetchedMedia>>) & {
  toFile?: (request: TMediaRequest & { kind: 'video' }) => Promise<TStep<TSpooledMedia>>;
};

/**
 * This service's own uploaded media (the media library): URLs under its PUBLIC_URL are read from the
 * media store directly, never over HTTP from itself (no address policy applies: the bytes are ours).
 */
export interface TOwnMediaSource {
  /** A stream of the item's bytes when `url` is one of ours; null when it is any other URL. */
  open(
    url: string,
  ): Promise<{ found: true; stream: AsyncIterable<Buffer> & { destroy(): void } } | { found: false } | null>;
  /**
   * The item's file when the store is a local directory (MEDIA_STORAGE=fs): videos are then sent from it in
   * place instead of being copied to a temporary file first. Null for other URLs or stores.
   */
  localFile?(url: string): Promise<{ found: true; path: string } | { found: false } | null>;
}

/** The download policy (`@sps/safe-fetch`) plus what only the connectors' fetcher needs. */
export interface TMediaFetchConfig extends TDownloadPolicy {
  /** Where own media URLs are read from (the publisher passes the media store). */
  ownMedia?: TOwnMediaSource;
  /** Bound on a whole image download (every redirect hop, headers and body). Default 30 s. */
  timeoutMs?: number;
  /**
   * Images are downloaded up to this many bytes even when the network takes fewer, because sharp can
   * usually bring a large photo under the network's limit (Bluesky's 1,000,000 bytes). Default 20 MB.
   */
  sourceImageMaxBytes?: number;
  /**
   * Bounds the disk `toFile` fills at once in this process, and one account's share of it (the publisher's
   * `MEDIA_SPOOL_MAX`). A video that does not fit now fails `transient` (with `retryAfterMs`), one larger
   * than the whole budget `rejected`. Absent: no bound.
   */
  spoolBudget?: TSpoolBudget;
}
