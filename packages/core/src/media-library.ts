import { z } from 'zod';
import { givenQueryValues, pageLimitQuery, pageOffsetQuery } from './list-query-input.js';
import { parseOrThrow } from './zod-issues.js';

/**
 * The media library's domain: which bytes are taken, how large, how much an account may keep, and the
 * two variants' views of an item. Pure: the API streams, stores and measures; this decides.
 */

export type TMediaItemType = 'image' | 'gif' | 'video';

/** Types some network takes (by magic numbers); anything else is 415 `unsupported_media_type`. */
export const ACCEPTED_MEDIA_TYPES: Record<string, { type: TMediaItemType; ext: string }> = {
  'image/jpeg': { type: 'image', ext: 'jpg' },
  'image/png': { type: 'image', ext: 'png' },
  'image/webp': { type: 'image', ext: 'webp' },
  'image/gif': { type: 'gif', ext: 'gif' },
  'video/mp4': { type: 'video', ext: 'mp4' },
  'video/quicktime': { type: 'video', ext: 'mov' },
  'video/webm': { type: 'video', ext: 'webm' },
};

const MB = 1024 * 1024;
const GB = 1024 * MB;

export interface TMediaLimits {
  /** Largest single image or GIF. */
  imageBytes: number;
  /** Largest single video. */
  videoBytes: number;
  /** All items of the account together. */
  quotaBytes: number;
}

/**
 * Per plan. Videos reach what the networks take on the plans that publish them: X 512 MB, LinkedIn 500 MB,
 * Facebook and Instagram 1 GB and up, TikTok 4 GB, YouTube far more (capped here at TikTok's 4 GB on the
 * top plan). Images: 50 MB covers every network's source limit (they are re-encoded to each network's own
 * at publish). `none` (no active plan) gets the free plan's limits so the trial can try uploads.
 */
export const MEDIA_LIMITS: Record<'none' | 'free' | 'starter' | 'pro', TMediaLimits> = {
  none: { imageBytes: 50 * MB, videoBytes: 512 * MB, quotaBytes: 2 * GB },
  free: { imageBytes: 50 * MB, videoBytes: 512 * MB, quotaBytes: 2 * GB },
  starter: { imageBytes: 50 * MB, videoBytes: 1 * GB, quotaBytes: 25 * GB },
  pro: { imageBytes: 50 * MB, videoBytes: 4 * GB, quotaBytes: 250 * GB },
};

export function mediaLimitsOf(plan: string): TMediaLimits {
  return MEDIA_LIMITS[plan as keyof typeof MEDIA_LIMITS] ?? MEDIA_LIMITS.free;
}

export const MAX_ALT_TEXT = 1000;

export const ZMediaAltText = z
  .string()
  .max(MAX_ALT_TEXT, { error: `must be at most ${MAX_ALT_TEXT} characters` })
  .transform((value) => (value.trim() === '' ? null : value));

const ZMediaPage = z.object({ limit: pageLimitQuery(100, 20), offset: pageOffsetQuery() });
export type TMediaPage = z.output<typeof ZMediaPage>;

export function parseMediaPage(query: unknown): TMediaPage {
  return parseOrThrow(ZMediaPage, givenQueryValues((query ?? {}) as Record<string, unknown>));
}

export interface TMediaRecord {
  id: string;
  accountId: string;
  storageKey: string;
  type: TMediaItemType;
  mimeType: string;
  sizeBytes: number;
  width: number | null;
  height: number | null;
  durationS: number | null;
  altText: string | null;
  etag: string;
  createdAt: Date;
}

/** Where an item's bytes live in the store: sharded by the id's first two characters. */
export function mediaStorageKey(id: string): string {
  return `media/${id.slice(0, 2)}/${id}`;
}

/** The item's public URL: `${PUBLIC_URL}/media/<id>.<ext>` (the extension helps networks that look at it). */
export function mediaUrl(publicUrl: string, item: Pick<TMediaRecord, 'id' | 'mimeType'>): string {
  const ext = ACCEPTED_MEDIA_TYPES[item.mimeType]?.ext;
  return `${publicUrl}/media/${item.id}${ext ? `.${ext}` : ''}`;
}

const OWN_MEDIA_PATH =
  /^\/media\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?:\.[a-z0-9]{1,5})?$/;

/** The id of a media URL under this service's `publicUrl`, or null for any other URL. */
export function ownMediaId(publicUrl: string, url: string): string | null {
  let target: URL;
  let base: URL;
  try {
    target = new URL(url);
    base = new URL(publicUrl);
  } catch {
    return null;
  }
  if (target.origin !== base.origin || target.search !== '') return null;
  const prefix = base.pathname.replace(/\/+$/, '');
  if (!target.pathname.startsWith(`${prefix}/media/`)) return null;
  return OWN_MEDIA_PATH.exec(target.pathname.slice(prefix.length))?.[1] ?? null;
}

export function mediaViewB(publicUrl: string, item: TMediaRecord) {
  return {
    id: item.id,
    url: mediaUrl(publicUrl, item),
    type: item.type,
    mime_type: item.mimeType,
    size_bytes: item.sizeBytes,
    width: item.width,
    height: item.height,
    duration_s: item.durationS,
    alt_text: item.altText,
    created_at: item.createdAt.toISOString(),
  };
}

export function mediaViewA(publicUrl: string, item: TMediaRecord) {
  return {
    id: item.id,
    url: mediaUrl(publicUrl, item),
    type: item.type,
    mimeType: item.mimeType,
    sizeBytes: item.sizeBytes,
    width: item.width,
    height: item.height,
    durationS: item.durationS,
    altText: item.altText,
    createdAt: item.createdAt.toISOString(),
  };
}

const mediaFields = {
  id: z.string().meta({ description: 'The item id (a UUID).' }),
  url: z.string().meta({
    description:
      'Public URL under PUBLIC_URL answering the bytes (with Range) to anyone holding it; use it as a media URL in posts.',
  }),
  type: z.enum(['image', 'gif', 'video']),
};

/** Variant B's media item, as `mediaViewB` writes it. */
export const ZMediaViewB = z.object({
  ...mediaFields,
  mime_type: z.string(),
  size_bytes: z.int().min(0),
  width: z.int().nullable(),
  height: z.int().nullable(),
  duration_s: z.number().nullable().meta({ description: 'Seconds, for MP4 and MOV videos.' }),
  alt_text: z.string().nullable(),
  created_at: z.string(),
});

/** Variant A's media item, as `mediaViewA` writes it. */
export const ZMediaViewA = z.object({
  ...mediaFields,
  mimeType: z.string(),
  sizeBytes: z.int().min(0),
  width: z.int().nullable(),
  height: z.int().nullable(),
  durationS: z.number().nullable().meta({ description: 'Seconds, for MP4 and MOV videos.' }),
  altText: z.string().nullable(),
  createdAt: z.string(),
});

mediaViewB satisfies (publicUrl: string, item: TMediaRecord) => z.output<typeof ZMediaViewB>;
mediaViewA satisfies (publicUrl: string, item: TMediaRecord) => z.output<typeof ZMediaViewA>;

/** The query of the media lists (for the OpenAPI document). */
export const ZMediaPageQuery = ZMediaPage;
