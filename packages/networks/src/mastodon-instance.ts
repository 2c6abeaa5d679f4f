import type { Got } from 'got';
import type { TConnectorAccount, TConnectorOptions } from './connector.js';
import { createExpiringCache } from './expiring-cache.js';
import { chosenHostProblem, createHttpClient, sameOrigin, type TStep } from './http-client.js';

/**
 * What one Mastodon server allows, from `GET /api/v2/instance` (`configuration.statuses` and
 * `configuration.media_attachments`). Every server sets its own: forks and admins raise the 500-character
 * limit, and media limits vary with the server's storage.
 * https://docs.joinmastodon.org/methods/instance/#v2
 * https://docs.joinmastodon.org/entities/Instance/#configuration
 */
export interface TMastodonLimits {
  /** null when the server did not say (old servers): the server itself then judges the text. */
  maxCharacters: number | null;
  maxMediaAttachments: number;
  /** null when the server did not say: any type the media fetcher recognises is sent. */
  supportedMimeTypes: string[] | null;
  imageSizeLimit: number;
  videoSizeLimit: number;
  descriptionLimit: number;
}

/**
 * Mastodon's own defaults (MediaAttachment IMAGE_LIMIT 16 MB, VIDEO_LIMIT 99 MB, 4 attachments, 1,500
 * characters of description), used for what a server does not announce.
 */
export const MASTODON_DEFAULT_LIMITS: TMastodonLimits = {
  maxCharacters: null,
  maxMediaAttachments: 4,
  supportedMimeTypes: null,
  imageSizeLimit: 16 * 1024 * 1024,
  videoSizeLimit: 99 * 1024 * 1024,
  descriptionLimit: 1500,
};

interface TInstanceV2 {
  configuration?: {
    statuses?: { max_characters?: unknown; max_media_attachments?: unknown };
    media_attachments?: {
      supported_mime_types?: unknown;
      image_size_limit?: unknown;
      video_size_limit?: unknown;
      description_limit?: unknown;
    };
  };
}

/**
 * The most the publisher downloads for one attachment, whatever a server announces: the media fetcher holds
 * a download in memory, and a server run by an API user must not choose how much. Images: Mastodon's own
 * default (larger sources are re-encoded to fit, up to the fetcher's source cap); videos: the 512 MB the
 * other connectors stop at (X, TikTok, YouTube, Slack). mastodon.social itself announces 16,777,216 and
 * 103,809,024 bytes (https://github.com/mastodon/mastodon/discussions/26709).
 */
export const MASTODON_MAX_IMAGE_BYTES = MASTODON_DEFAULT_LIMITS.imageSizeLimit;
export const MASTODON_MAX_VIDEO_BYTES = 512 * 1024 * 1024;

/** A positive integer within a sane bound, or the fallback (a server's answer is input like any other). */
function count(value: unknown, fallback: number, max: number): number;
function count(value: unknown, fallback: null, max: number): number | null;
function count(value: unknown, fallback: number | null, max: number): number | null {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? Math.min(value, max) : fallback;
}

export function parseInstanceLimits(body: unknown): TMastodonLimits {
  const config = (body as TInstanceV2 | null)?.configuration;
  const media = config?.media_attachments;
  const types = media?.supported_mime_types;
  const d = MASTODON_DEFAULT_LIMITS;
  return {
    maxCharacters: count(config?.statuses?.max_characters, null, 1_000_000),
    maxMediaAttachments: count(config?.statuses?.max_media_attachments, d.maxMediaAttachments, 100),
    supportedMimeTypes:
      Array.isArray(types) && types.every((t) => typeof t === 'string') ? types.slice(0, 200) : null,
    imageSizeLimit: count(media?.image_size_limit, d.imageSizeLimit, MASTODON_MAX_IMAGE_BYTES),
    videoSizeLimit: count(media?.video_size_limit, d.videoSizeLimit, MASTODON_MAX_VIDEO_BYTES),
    descriptionLimit: count(media?.description_limit, d.descriptionLimit, 100_000),
  };
}

export interface TInstanceCacheOptions {
  /** How long a server's answer is trusted. Default 1 hour: admins rarely change limits. */
  ttlMs?: number;
  /** Servers remembered at once; the oldest is forgotten first. */
  maxEntries?: number;
}

/**
 * Per-server limits, cached for a while. A server that cannot be asked (down, or older than 4.0 without
 * the v2 endpoint) gets Mastodon's defaults and no text limit, and is asked again next time: the status
 * call then lets the server judge the text itself.
 */
export function createInstanceCache(options: TInstanceCacheOptions = {}) {
  const entries = createExpiringCache<TMastodonLimits>(
    options.ttlMs ?? 60 * 60_000,
    options.maxEntries ?? 500,
  );

  /** `http` bounds the answer's size when the server is one an API user chose (createHttpClient). */
  return async function limitsOf(base: string, http: Got): Promise<TMastodonLimits> {
    const cached = entries.get(base);
    if (cached) return cached;
    let limits: TMastodonLimits;
    try {
      limits = parseInstanceLimits(await http.get('api/v2/instance').json());
    } catch {
      return MASTODON_DEFAULT_LIMITS;
    }
    entries.set(base, limits);
    return limits;
  };
}

/** Every account lives on its own instance; its instance URL wins over the configured one. */
export function mastodonClientFor(
  account: TConnectorAccount,
  options: TConnectorOptions,
  clients: Map<string, Got>,
  timeoutMs: number,
): TStep<{ base: string; http: Got }> {
  const base = account.instanceUrl ?? options.baseUrl;
  if (!base) {
    return {
      ok: false,
      failure: {
        kind: 'rejected',
        message: `The Mastodon account ${account.accountName} has no instance URL. Reconnect it with its instance URL.`,
      },
    };
  }
  // An instance the account's owner named (anything but the operator's NETWORK_MASTODON_BASE_URL) was
  // checked at connect time; its name may resolve elsewhere since, so it is checked on every connection.
  const chosenByUser = !sameOrigin(base, options.baseUrl);
  if (chosenByUser) {
    const problem = chosenHostProblem(base, 'Mastodon');
    if (problem) return { ok: false, failure: problem };
  }
  let client = clients.get(base);
  if (!client) {
    client = createHttpClient(base, timeoutMs, { chosenByUser });
    clients.set(base, client);
  }
  return { ok: true, value: { base, http: client } };
}
