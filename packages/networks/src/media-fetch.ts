import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { declaredType, mediaTypeProblem, SNIFF_BYTES, sniffMedia } from '@sps/core';
import got, { type Request, RequestError, TimeoutError } from 'got';
import {
  assertFetchableMediaUrl,
  ForbiddenAddressError,
  guardedLookup,
  type TAddressPolicy,
} from './address-guard.js';
import type { TFailureKind } from './connector.js';
import type { TStep } from './http-client.js';
import { fitImage } from './image-fit.js';
import type { TFetchMedia, TMediaFetchConfig, TSpooledMedia } from './media-fetch-types.js';
import type { TSpoolLease, TSpoolRefusal } from './spool-budget.js';

export type {
  TFetchedMedia,
  TFetchMedia,
  TMediaFetchConfig,
  TMediaRequest,
  TOwnMediaSource,
  TSpooledMedia,
} from './media-fetch-types.js';

const DEFAULTS = {
  timeoutMs: 30_000,
  videoTimeoutMs: 300_000,
  maxRedirects: 3,
  sourceImageMaxBytes: 20_000_000,
};

/** A download that ended on purpose, with a reason fit to show the API user. */
class MediaRefusal extends Error {
  constructor(
    readonly kind: Extract<TFailureKind, 'rejected' | 'transient'>,
    readonly reason: string,
    /** For a full spool budget: when to try again (nothing was sent). */
    readonly retryAfterMs?: number,
  ) {
    super(reason);
  }
}

/** How soon a video refused for a full spool budget is tried again (others' uploads take minutes). */
export const SPOOL_FULL_RETRY_MS = 30_000;

/** Holds `total` bytes on the lease or throws why not: past the whole budget is permanent, a full one is not. */
function holdSpool(lease: TSpoolLease | undefined, total: number) {
  const refused: TSpoolRefusal | null = lease ? lease.ensure(total) : null;
  if (!refused) return;
  if (refused.kind === 'oversize') throw new MediaRefusal('rejected', refused.message);
  throw new MediaRefusal(
    'transient',
    `${refused.message}; it will be retried automatically`,
    SPOOL_FULL_RETRY_MS,
  );
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * The URL as the user gave it, for messages: without user info and query (signed URLs carry tokens
 * there), bounded, and never the address it resolved to.
 */
export function shown(url: string): string {
  let text = url;
  try {
    const parsed = new URL(url);
    text = `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    // An invalid URL is shown as given (bounded): it is what the user sent.
  }
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

function waitForResponse(stream: Request) {
  return new Promise<Request['response'] & object>((resolve, reject) => {
    stream.once('response', resolve);
    stream.once('error', reject);
  });
}

/** Reads a body, aborting as soon as it passes `cap` or its first bytes are not the kind asked for. */
async function readCapped(
  stream: AsyncIterable<Buffer>,
  cap: number,
  kind: 'image' | 'video',
  declared: string,
  tooLarge: string,
): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  let sniffed = false;
  for await (const chunk of stream) {
    total += chunk.length;
    if (total > cap) throw new MediaRefusal('rejected', tooLarge);
    chunks.push(chunk);
    if (!sniffed && total >= SNIFF_BYTES) {
      sniffed = true;
      const problem = mediaTypeProblem(kind, declared, sniffMedia(Buffer.concat(chunks)));
      if (problem) throw new MediaRefusal('rejected', problem);
    }
  }
  const bytes = Buffer.concat(chunks, total);
  const problem = mediaTypeProblem(kind, declared, sniffMedia(bytes));
  if (problem) throw new MediaRefusal('rejected', problem);
  return bytes;
}

/** Like `readCapped`, but writes the body to `path` as it arrives (with back-pressure); returns its size. */
async function spoolCapped(
  stream: AsyncIterable<Buffer>,
  path: string,
  cap: number,
  declared: string,
  tooLarge: string,
  lease?: TSpoolLease,
): Promise<{ size: number; type: string }> {
  const out = createWriteStream(path, { mode: 0o600 });
  const failed = new Promise<never>((_resolve, reject) => out.once('error', reject));
  failed.catch(() => undefined);
  let head = Buffer.alloc(0);
  let total = 0;
  try {
    for await (const chunk of stream) {
      total += chunk.length;
      if (total > cap) throw new MediaRefusal('rejected', tooLarge);
      // An unannounced size is held as it arrives, so the file never outgrows its share of the disk.
      holdSpool(lease, total);
      if (head.length < SNIFF_BYTES) {
        head = Buffer.concat([head, chunk.subarray(0, SNIFF_BYTES - head.length)]);
        if (head.length >= SNIFF_BYTES) {
          const problem = mediaTypeProblem('video', declared, sniffMedia(head));
          if (problem) throw new MediaRefusal('rejected', problem);
        }
      }
      if (!out.write(chunk)) await Promise.race([once(out, 'drain'), failed]);
    }
    await Promise.race([new Promise<void>((resolve) => out.end(resolve)), failed]);
  } catch (err) {
    out.destroy();
    throw err;
  }
  const sniffed = sniffMedia(head);
  const problem = mediaTypeProblem('video', declared, sniffed);
  if (problem) throw new MediaRefusal('rejected', problem);
  return { size: total, type: sniffed?.type ?? 'application/octet-stream' };
}

/**
 * A media library video in a filesystem store, sent from its own file (no temporary copy): the same size and
 * type checks as a spooled one; `dispose` leaves the file alone. Items are immutable and a publishing post's
 * items cannot be deleted (media_in_use), so the file stays put while it is sent.
 */
async function inPlace(
  local: { found: true; path: string } | { found: false },
  url: string,
  network: string,
  maxBytes: number,
  accept: readonly string[] | undefined,
): Promise<TStep<TSpooledMedia>> {
  const refuse = (reason: string) => ({
    ok: false as const,
    failure: {
      kind: 'rejected' as const,
      message: `Could not use the video ${shown(url)} for ${network}: ${reason}. Fix the media URL or file and retry.`,
    },
  });
  if (!local.found) return refuse('the uploaded media item no longer exists');
  const handle = await open(local.path, 'r').catch(() => null);
  if (!handle) return refuse('the uploaded media item no longer exists');
  try {
    const { size } = await handle.stat();
    if (size > maxBytes)
      return refuse(`the file is larger than ${network} accepts for a video (${maxBytes} bytes)`);
    const head = Buffer.alloc(Math.min(size, SNIFF_BYTES));
    await handle.read(head, 0, head.length, 0);
    const sniffed = sniffMedia(head);
    const problem = mediaTypeProblem('video', '', sniffed);
    if (problem) return refuse(problem);
    const type = sniffed?.type ?? 'application/octet-stream';
    if (accept && !accept.includes(type))
      return refuse(`the file is a ${type} video, a type ${network} does not take`);
    return { ok: true, value: { path: local.path, size, type, dispose: async () => undefined } };
  } finally {
    await handle.close();
  }
}

function refusalOf(err: unknown, timedOut: boolean): MediaRefusal {
  if (err instanceof MediaRefusal) return err;
  if (timedOut || err instanceof TimeoutError) {
    return new MediaRefusal('transient', 'the download did not finish in time');
  }
  const cause = err instanceof RequestError ? err.cause : err;
  const code = (err as { code?: string } | null)?.code;
  if (
    err instanceof ForbiddenAddressError ||
    cause instanceof ForbiddenAddressError ||
    code === 'EFORBIDDENADDRESS'
  ) {
    return new MediaRefusal(
      'rejected',
      'its host is not a public internet address (loopback, private, link-local or metadata), so it is never fetched',
    );
  }
  if (code === 'ENOTFOUND') return new MediaRefusal('rejected', 'its host name does not exist');
  return new MediaRefusal('transient', 'its host could not be reached');
}

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
function createMediaClient(config: TMediaFetchConfig) {
  const policy: boolean | TAddressPolicy = config.forbiddenAddress ?? config.allowPrivate ?? false;
  const maxRedirects = config.maxRedirects ?? DEFAULTS.maxRedirects;
  const client = got.extend({
    dnsLookup: guardedLookup(policy) as never,
    followRedirect: false,
    throwHttpErrors: false,
    retry: { limit: 0 },
    headers: { 'user-agent': 'social-post-service/0.1 (media download)', accept: 'image/*, video/*' },
  });

  /**
   * Follows the URL (each redirect hop checked against the address policy) to a 2xx answer, and returns it
   * with its body unread. `deadline` bounds every hop; `track` learns the request in flight (to abort it).
   */
  async function open(url: string, deadline: number, track: (request: Request) => void) {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      throw new MediaRefusal('rejected', 'the URL is not valid');
    }
    for (let hop = 0; ; hop += 1) {
      assertFetchableMediaUrl(target, policy);
      if (Date.now() >= deadline) throw new MediaRefusal('transient', 'the download did not finish in time');
      const current = client.stream(target, { timeout: { request: Math.max(1, deadline - Date.now()) } });
      track(current);
      const response = await waitForResponse(current);
      const status = response.statusCode;
      if (REDIRECTS.has(status)) {
        current.destroy();
        const location = response.headers.location;
        if (!location) throw new MediaRefusal('rejected', 'its host answered a redirect without a location');
        if (hop >= maxRedirects) {
          throw new MediaRefusal('rejected', `it redirects more than ${maxRedirects} times`);
        }
        try {
          target = new URL(location, target);
        } catch {
          throw new MediaRefusal('rejected', 'it redirects to an invalid URL');
        }
        continue;
      }
      if (status < 200 || status > 299) {
        current.destroy();
        const retryable = status === 408 || status === 429 || status >= 500;
        throw new MediaRefusal(
          retryable ? 'transient' : 'rejected',
          retryable
            ? 'its host answered with a temporary error'
            : 'its host answered with an error (missing or not allowed)',
        );
      }
      return { stream: current, response };
    }
  }
  return { open };
}

/** A media download opened for streaming (the media library's upload from a URL). */
export interface TOpenedMedia {
  stream: Request;
  /** Content-Length as announced, when it was. */
  announcedBytes: number | null;
}

/**
 * Opens `url` with the same address policy, redirect rule and deadline as the publisher's fetcher, and
 * hands back the body as a stream for the caller to bound and store. Throws an Error whose message says
 * why in the user's terms (never the resolved address).
 */
export async function openMediaDownload(url: string, config: TMediaFetchConfig = {}): Promise<TOpenedMedia> {
  const bound = config.videoTimeoutMs ?? DEFAULTS.videoTimeoutMs;
  let current: Request | undefined;
  const timer = setTimeout(
    () => current?.destroy(new MediaRefusal('transient', 'the download did not finish in time')),
    bound,
  );
  try {
    const { stream, response } = await createMediaClient(config).open(url, Date.now() + bound, (r) => {
      current = r;
    });
    for (const event of ['close', 'end', 'error']) stream.once(event, () => clearTimeout(timer));
    const announced = Number(response.headers['content-length']);
    return { stream, announcedBytes: Number.isFinite(announced) ? announced : null };
  } catch (err) {
    clearTimeout(timer);
    current?.destroy();
    const refusal = refusalOf(err, false);
    throw new Error(`Could not download ${shown(url)}: ${refusal.reason}`);
  }
}

export function createMediaFetcher(config: TMediaFetchConfig = {}): TFetchMedia {
  const sourceImageMaxBytes = config.sourceImageMaxBytes ?? DEFAULTS.sourceImageMaxBytes;
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
        : (config.timeoutMs ?? DEFAULTS.timeoutMs);
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
