import got, { type Request, RequestError, TimeoutError } from 'got';
import {
  assertFetchableMediaUrl,
  ForbiddenAddressError,
  guardedLookup,
  type TAddressPolicy,
} from './address-guard.js';

// The SSRF-guarded HTTP side of the connectors' media fetcher (`@sps/networks` media-fetch.ts): the address
// policy on every redirect hop, one deadline, and failures worded for the API user. The media library's
// upload from a URL uses it too.

/** How a media URL may be downloaded: which addresses, how many redirects, how long. */
export interface TDownloadPolicy {
  /** Lets media URLs resolve to loopback or private addresses (`MEDIA_ALLOW_PRIVATE_URLS`, tests only). */
  allowPrivate?: boolean;
  /**
   * Replaces the address policy (true = refuse the address) for every hop; overrides `allowPrivate`.
   * For deployments with a trusted internal media host, and for tests that need one loopback address
   * allowed and another refused.
   */
  forbiddenAddress?: TAddressPolicy;
  /** Bound on a whole video download. Default 5 minutes (videos run to hundreds of megabytes). */
  videoTimeoutMs?: number;
  /** Redirects followed, each hop checked again. Default 3. */
  maxRedirects?: number;
}

/** The policy's defaults; the connectors' fetcher (`@sps/networks`) adds its own for images. */
export const DEFAULTS = {
  videoTimeoutMs: 300_000,
  maxRedirects: 3,
};

/** A download that ended on purpose, with a reason fit to show the API user. */
export class MediaRefusal extends Error {
  constructor(
    readonly kind: 'rejected' | 'transient',
    readonly reason: string,
    /** For a full spool budget: when to try again (nothing was sent). */
    readonly retryAfterMs?: number,
  ) {
    super(reason);
  }
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

type TMediaResponse = Request['response'] & object;

function waitForResponse(stream: Request) {
  return new Promise<TMediaResponse>((resolve, reject) => {
    stream.once('response', resolve);
    stream.once('error', reject);
  });
}
export function refusalOf(err: unknown, timedOut: boolean): MediaRefusal {
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
 * The HTTP client of every media download (the whole policy is described at `@sps/networks`' `createMediaFetcher`): each
 * hop's address checked by `guardedLookup` and `assertFetchableMediaUrl`, redirects followed by hand.
 */
export function createMediaClient(config: TDownloadPolicy): {
  open(
    url: string,
    deadline: number,
    track: (request: Request) => void,
  ): Promise<{ stream: Request; response: TMediaResponse }>;
} {
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
export async function openMediaDownload(url: string, config: TDownloadPolicy = {}): Promise<TOpenedMedia> {
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
