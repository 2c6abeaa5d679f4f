import { z } from 'zod';
import { validationError } from './app-error.js';
import { ZFirstComment } from './first-comment.js';
import { givenQueryValues, pageLimitQuery, pageOffsetQuery } from './list-query-input.js';
import { PLATFORMS } from './platforms.js';
import { isVideoUrl, type TMedia, type TPostChanges, type TSegment } from './post-model.js';
import { codePointLength, futureIssue, ZHttpUrl, ZOffsetDateTime, ZText } from './text-fields.js';
import { zodIssues } from './zod-issues.js';

/** The largest text any listed network accepts (Facebook); network limits are checked at publish. */
export const MAX_CONTENT_B = 63206;

export const ZPlatformB = z.enum(PLATFORMS, { error: `must be one of ${PLATFORMS.join(', ')}` });

export const ZPlatformsB = z
  .array(ZPlatformB, { error: 'must be an array of platform names' })
  .min(1, { error: 'must list at least one platform' })
  // Longer lists must repeat one; the bound also keeps a huge array from being checked item by item.
  .max(PLATFORMS.length, { error: 'must not repeat a platform' })
  .refine((list) => new Set(list).size === list.length, { error: 'must not repeat a platform' });

export const ZMediaB = z
  .object(
    {
      images: z
        .array(
          z.object(
            { url: ZHttpUrl, alt_text: ZText(0, 1000).optional() },
            { error: 'must be an object {url, alt_text?}' },
          ),
          { error: 'must be an array' },
        )
        .max(4, { error: 'must have at most 4 images' })
        .optional(),
      video: z
        .object(
          { url: ZHttpUrl, thumbnail_url: ZHttpUrl.optional() },
          { error: 'must be an object {url, thumbnail_url?} or null' },
        )
        .nullable()
        .optional(),
    },
    { error: 'must be an object {images?, video?}' },
  )
  .superRefine((media, ctx) => {
    if (media.video && (media.images?.length ?? 0) > 0) {
      ctx.addIssue({ code: 'custom', path: ['video'], message: 'cannot be combined with images' });
    }
  });

export const ZSegmentB = z
  .object(
    {
      content: ZText(0, 5000),
      media_urls: z
        .array(ZHttpUrl, { error: 'must be an array of URL strings' })
        // The exact rule (4 images or 1 video) is below; this bound only stops huge arrays early.
        .max(100, { error: 'must have at most 4 images' })
        .optional(),
    },
    { error: 'must be an object {content, media_urls?}' },
  )
  .superRefine((segment, ctx) => {
    const urls = segment.media_urls ?? [];
    const videos = urls.filter(isVideoUrl).length;
    if (videos > 0 && urls.length > 1) {
      ctx.addIssue({
        code: 'custom',
        path: ['media_urls'],
        message: 'may hold up to 4 images or 1 video, not both',
      });
    } else if (urls.length > 4) {
      ctx.addIssue({ code: 'custom', path: ['media_urls'], message: 'must have at most 4 images' });
    }
    if (codePointLength(segment.content.trim()) === 0 && urls.length === 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['content'],
        message: 'must not be empty unless media_urls is given',
      });
    }
  });

export const ZSegmentsB = z
  .array(ZSegmentB, { error: 'must be an array' })
  .max(24, { error: 'must have at most 24 thread replies' });

export const ZCreatePostB = z.object(
  {
    content: ZText(1, MAX_CONTENT_B),
    platforms: ZPlatformsB,
    scheduled_for: ZOffsetDateTime.optional(),
    media: ZMediaB.nullable().optional(),
    segments: ZSegmentsB.nullable().optional(),
    first_comment: ZFirstComment.nullable().optional().meta({
      description:
        'Posted once the post and its thread are out: a comment on LinkedIn, Facebook, Instagram and YouTube, a reply to the last post on X, Threads, Bluesky and Mastodon; refused (400) for other networks. Its outcome is `platform_results.<platform>.first_comment`.',
    }),
  },
  { error: 'the body must be a JSON object' },
);
export type TCreatePostB = z.input<typeof ZCreatePostB>;

export const ZUpdatePostB = z.object(
  {
    content: ZText(1, MAX_CONTENT_B).optional(),
    platforms: ZPlatformsB.optional(),
    scheduled_for: ZOffsetDateTime.nullable().optional(),
    media: ZMediaB.nullable().optional(),
    segments: ZSegmentsB.nullable().optional(),
    first_comment: ZFirstComment.nullable().optional().meta({
      description:
        'Posted once the post and its thread are out: a comment on LinkedIn, Facebook, Instagram and YouTube, a reply to the last post on X, Threads, Bluesky and Mastodon; refused (400) for other networks. Its outcome is `platform_results.<platform>.first_comment`.',
    }),
  },
  { error: 'the body must be a JSON object' },
);
export type TUpdatePostB = z.input<typeof ZUpdatePostB>;

function mediaFromB(media: z.output<typeof ZMediaB> | null): TMedia | null {
  if (!media) return null;
  const images = (media.images ?? []).map((i) => ({
    url: i.url,
    ...(i.alt_text !== undefined ? { altText: i.alt_text } : {}),
  }));
  const video = media.video
    ? {
        url: media.video.url,
        ...(media.video.thumbnail_url ? { thumbnailUrl: media.video.thumbnail_url } : {}),
      }
    : null;
  return images.length === 0 && !video ? null : { images, video };
}

function segmentsFromB(segments: z.output<typeof ZSegmentsB> | null): TSegment[] | null {
  if (!segments || segments.length === 0) return null;
  return segments.map((s) => {
    const urls = s.media_urls ?? [];
    const [first] = urls;
    const media: TMedia | null =
      urls.length === 0
        ? null
        : first && isVideoUrl(first)
          ? { images: [], video: { url: first } }
          : { images: urls.map((url) => ({ url })), video: null };
    return { content: s.content, media };
  });
}

export function parseCreatePostB(body: unknown, now: Date): TPostChanges {
  const parsed = ZCreatePostB.safeParse(body);
  if (!parsed.success) throw validationError(zodIssues(parsed.error));
  const input = parsed.data;
  const future = futureIssue(input.scheduled_for, now, 'scheduled_for');
  if (future) throw validationError([future]);
  return {
    content: input.content,
    platforms: input.platforms,
    scheduledFor: input.scheduled_for ?? null,
    media: mediaFromB(input.media ?? null),
    segments: segmentsFromB(input.segments ?? null),
    firstComment: input.first_comment ?? null,
  };
}

/** Only given fields change; `segments: []` or null removes the replies, omitted keeps them. */
export function parseUpdatePostB(body: unknown, now: Date): TPostChanges {
  const parsed = ZUpdatePostB.safeParse(body);
  if (!parsed.success) throw validationError(zodIssues(parsed.error));
  const input = parsed.data;
  const future = futureIssue(input.scheduled_for, now, 'scheduled_for');
  if (future) throw validationError([future]);
  return {
    ...(input.content !== undefined ? { content: input.content } : {}),
    ...(input.platforms !== undefined ? { platforms: input.platforms } : {}),
    ...(input.scheduled_for !== undefined ? { scheduledFor: input.scheduled_for } : {}),
    ...(input.media !== undefined ? { media: mediaFromB(input.media) } : {}),
    ...(input.segments !== undefined ? { segments: segmentsFromB(input.segments) } : {}),
    ...(input.first_comment !== undefined ? { firstComment: input.first_comment } : {}),
  };
}

export const LIST_STATUSES_B = ['draft', 'scheduled', 'publishing', 'published', 'failed'] as const;

/** GET /v1/posts query. */
export const ZListQueryB = z.object({
  status: z.enum(LIST_STATUSES_B, { error: `must be one of ${LIST_STATUSES_B.join(', ')}` }).optional(),
  limit: pageLimitQuery(100, 10),
  offset: pageOffsetQuery(),
});
export type TListQueryB = z.output<typeof ZListQueryB>;

export function parseListQueryB(query: Record<string, unknown>): TListQueryB {
  // Repeated query keys arrive as arrays; an empty value means "not given".
  const clean = givenQueryValues(query);
  const parsed = ZListQueryB.safeParse(clean);
  if (!parsed.success) throw validationError(zodIssues(parsed.error));
  return parsed.data;
}
