import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { declaredType, sniffMedia } from '@sps/core';
import { createMediaClient, DEFAULTS, MediaRefusal, refusalOf, shown } from '@sps/safe-fetch';
import type { Request } from 'got';
import { fitImage } from './image-fit.js';
import { holdSpool, inPlace, readCapped, spoolCapped } from './media-fetch-limits.js';
import type { TFetchMedia, TMediaFetchConfig } from './media-fetch-types.js';
import type { TSpoolLease } from './spool-budget.js';

export { SPOOL_FULL_RETRY_MS } from './media-fetch-limits.js';

export type {
  TFetchedMedia,
  TFetchMedia,
  TMediaFetchConfig,
  TMediaRequest,
  TOwnMediaSource,
  TSpooledMedia,
} from './media-fetch-types.js';

/** Image downloads: the whole download's bound, and how large a source image may be before it is fitted. */
const IMAGE_DEFAULTS = { timeoutMs: 30_000, sourceImageMaxBytes: 20_000_000 };

/**
 * The one place connectors download media given by API users. Every connector gets the same fetcher
 * (`TConnectorOptions.fetchMedia`), so the download policy lives here and nowhere else:
 * - address: the webhooks' policy (`guardedLookup` resolves, refuses loopback/private/link-local/metadata
 *   and connects to the checked address; IP literals checked before the request), on every redirect hop;
 * - redirects: at most `maxRedirects`, followed by hand so each hop is checked;
 * - size: Content-Length checked before the body, then counted while streaming and aborted past the cap;
 * - type: the first bytes' magic numbers must be an image or video of the kind asked for, and agree with
 *   a declared Content-Type;
 * - time: one deadline for the whole download, all hops, headers and body;
 * - fit: an image over the network's limit (or of a type it refuses) is re-encoded with sharp.
 * Failure messages name the URL as given and a reason, never a resolved address or the host's HTTP status.
 */
export function createMediaFetcher(config: TMediaFetchConfig = {}): TFetchMedia {
  const sourceImageMaxBytes = config.sourceImageMaxBytes ?? IMAGE_DEFAULTS.sourceImageMaxBytes;
  const client = createMediaClient(config);

  async function download(
    url: string,
    kind: 'image' | 'video',
    cap: number,
    limitText: string,
  ): Promise<Buffer>;
  async function download(
    url: string,
    kind: 'image' | 'video',
    cap: number,
    limitText: string,
    spoolTo: { path: string; lease?: TSpoolLease | undefined },
  ): Promise<{ size: number; type: string }>;
  async function download(
    url: string,
    kind: 'image' | 'video',
    cap: number,
    limitText: string,
    spoolTo?: { path: string; lease?: TSpoolLease | undefined },
  ): Promise<Buffer | { size: number; type: string }> {
    const own = await config.ownMedia?.open(url);
    if (own) {
      if (!own.found) throw new MediaRefusal('rejected', 'the uploaded media item no longer exists');
      try {
        if (spoolTo) return await spoolCapped(own.stream, spoolTo.path, cap, '', limitText, spoolTo.lease);
        return await readCapped(own.stream, cap, kind, '', limitText);
      } finally {
        own.stream.destroy();
      }
    }
    const bound =
      kind === 'video'
        ? (config.videoTimeoutMs ?? DEFAULTS.videoTimeoutMs)
        : (config.timeoutMs ?? IMAGE_DEFAULTS.timeoutMs);
    const deadline = Date.now() + bound;
    let current: Request | undefined;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      current?.destroy(new MediaRefusal('transient', 'the download did not finish in time'));
    }, bound);
    try {
      const { stream, response } = await client.open(url, deadline, (request) => {
        current = request;
      });
      const announced = Number(response.headers['content-length']);
      if (Number.isFinite(announced) && announced > cap) {
        stream.destroy();
        throw new MediaRefusal('rejected', limitText);
      }
      const declared = declaredType(response.headers['content-type']);
      if (spoolTo && Number.isFinite(announced)) {
        // The announced size is held before the body is read: a full budget costs no transfer.
        try {
          holdSpool(spoolTo.lease, announced);
        } catch (err) {
          stream.destroy();
          throw err;
        }
      }
      if (spoolTo) return await spoolCapped(stream, spoolTo.path, cap, declared, limitText, spoolTo.lease);
      return await readCapped(stream, cap, kind, declared, limitText);
    } catch (err) {
      current?.destroy();
      throw refusalOf(err, timedOut);
    } finally {
      clearTimeout(timer);
    }
  }

  const fetchMedia: TFetchMedia = async ({ url, kind, network, maxBytes, accept }) => {
    const fail = (refusal: MediaRefusal) => ({
      ok: false as const,
      failure: {
        kind: refusal.kind,
        message: `Could not use the ${kind} ${shown(url)} for ${network}: ${refusal.reason}.${refusal.kind === 'rejected' ? ' Fix the media URL or file and retry.' : ''}`,
      },
    });
    const cap = kind === 'image' ? Math.max(maxBytes, sourceImageMaxBytes) : maxBytes;
    const limitText =
      kind === 'image'
        ? `the file is larger than the ${cap} bytes downloaded for an image`
        : `the file is larger than ${network} accepts for a video (${maxBytes} bytes)`;
    let bytes: Buffer;
    try {
      bytes = await download(url, kind, cap, limitText);
    } catch (err) {
      return fail(refusalOf(err, false));
    }
    const type = sniffMedia(bytes)?.type ?? 'application/octet-stream';
    if (kind === 'video') {
      // Videos are never re-encoded: transcoding belongs to the networks' own processing.
      if (accept && !accept.includes(type)) {
        return fail(
          new MediaRefusal('rejected', `the file is a ${type} video, a type ${network} does not take`),
        );
      }
      return { ok: true, value: { bytes, type } };
    }
    const fitted = await fitImage({ bytes, type, maxBytes, accept });
    if (!fitted.ok) return fail(new MediaRefusal('rejected', fitted.reason));
    return {
      ok: true,
      value: {
        bytes: fitted.bytes,
        type: fitted.type,
        ...(fitted.bytes !== bytes ? { reencoded: true } : {}),
      },
    };
  };

  fetchMedia.toFile = async ({ url, network, maxBytes, accept, account }) => {
    const local = await config.ownMedia?.localFile?.(url);
    if (local) return inPlace(local, url, network, maxBytes, accept);
    // Nothing is held yet (the size comes with the answer's headers or with the bytes), so this never fails.
    const reserved = config.spoolBudget?.reserve(account ?? '', 0);
    const lease = reserved?.ok ? reserved.lease : undefined;
    const dir = await mkdtemp(join(tmpdir(), 'sps-media-')).catch((err: unknown) => {
      lease?.release();
      throw err;
    });
    // The file and its place in the budget go together, on every path (success, refusal, error).
    const dispose = async () => {
      try {
        await rm(dir, { recursive: true, force: true });
      } finally {
        lease?.release();
      }
    };
    const path = join(dir, 'video');
    try {
      const { size, type } = await download(
        url,
        'video',
        maxBytes,
        `the file is larger than ${network} accepts for a video (${maxBytes} bytes)`,
        { path, lease },
      );
      if (accept && !accept.includes(type)) {
        throw new MediaRefusal('rejected', `the file is a ${type} video, a type ${network} does not take`);
      }
      return { ok: true, value: { path, size, type, dispose } };
    } catch (err) {
      await dispose();
      const refusal = refusalOf(err, false);
      return {
        ok: false,
        failure: {
          kind: refusal.kind,
          message: `Could not use the video ${shown(url)} for ${network}: ${refusal.reason}.${refusal.kind === 'rejected' ? ' Fix the media URL or file and retry.' : ''}`,
          ...(refusal.retryAfterMs !== undefined
            ? { retryAfterMs: refusal.retryAfterMs, spoolFull: true }
            : {}),
        },
      };
    }
  };
  return fetchMedia;
}
