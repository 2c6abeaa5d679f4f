import { z } from 'zod';
import { AppError, type TFieldIssue, validationError } from './app-error.js';
import { ZFirstComment } from './first-comment.js';
import { givenQueryValues, pageLimitQuery, pageOffsetQuery } from './list-query-input.js';
import { type TPlatform, VARIANT_A_PLATFORMS } from './platforms.js';
import { isVideoUrl, type TMedia, type TPostChanges, type TSegment } from './post-model.js';
import {
  codePointLength,
  futureIssue,
  isStorableText,
  UNSTORABLE_TEXT_MESSAGE,
  ZHttpUrl,
  ZOffsetDateTime,
  ZText,
} from './text-fields.js';
import { describeViolation, findTextViolations } from './text-length.js';
import { zodIssues } from './zod-issues.js';

/** Media is a URI string or `{url, altText}`; strings are normalised to objects so paths stay uniform. */
export const ZMediaItemA = z.preprocess(
  (value) => (typeof value === 'string' ? { url: value } : value),
  z.object(
    { url: ZHttpUrl, altText: ZText(0, 1000).optional() },
    { error: 'must be a URL string or an object {url, altText?}' },
  ),
);
export const ZMediaListA = z.array(ZMediaItemA, { error: 'must be an array' }).max(4, {
  error: 'must have at most 4 items',
});

export const ZPlatformA = z.enum(VARIANT_A_PLATFORMS, {
  error: `must be one of ${VARIANT_A_PLATFORMS.join(', ')}`,
});

export const ZPollA = z.object(
  {
    options: z
      .array(
        z
          .string({ error: 'must be a string' })
          .refine(isStorableText, { error: UNSTORABLE_TEXT_MESSAGE, abort: true })
          .refine((o) => o.trim().length > 0 && codePointLength(o) <= 25, {
            error: 'each option must be 1 to 25 characters',
          }),
        { error: 'must be an array of strings' },
      )
      .min(2, { error: 'must have 2 to 4 options' })
      .max(4, { error: 'must have 2 to 4 options' }),
    durationMinutes: z
      .int({ error: 'must be an integer' })
      .min(5, { error: 'must be 5 to 10080 minutes' })
      .max(10080, { error: 'must be 5 to 10080 minutes' }),
  },
  { error: 'must be an object {options, durationMinutes}' },
);

const ZQueueStatus = z.enum(['queued', 'pending'], { error: 'must be queued, pending or null' }).nullable();

/** The CreatePost body (also PUT's body), with Variant A's snake_case aliases. */
export const ZCreatePostA = z.object(
  {
    content: ZText(1, 5000),
    platforms: z
      .array(ZPlatformA, { error: 'must be an array of platform names' })
      .min(1, { error: 'must list at least one platform' })
      // Longer lists must repeat one; the bound also keeps a huge array from being checked item by item.
      .max(VARIANT_A_PLATFORMS.length, { error: 'must not repeat a platform' })
      .refine((list) => new Set(list).size === list.length, { error: 'must not repeat a platform' }),
    scheduledFor: ZOffsetDateTime.nullable().optional(),
    scheduled_for: ZOffsetDateTime.nullable().optional(),
    published: z.boolean({ error: 'must be a boolean' }).optional(),
    queueStatus: ZQueueStatus.optional(),
    queue_status: ZQueueStatus.optional(),
    mediaUrls: ZMediaListA.optional(),
    media: ZMediaListA.optional(),
    segments: z
      .array(
        z.object(
          { content: ZText(1, 5000), mediaUrls: ZMediaListA.optional() },
          { error: 'must be an object {content, mediaUrls?}' },
        ),
        { error: 'must be an array' },
      )
      .max(24, { error: 'must have at most 24 thread replies' })
      .optional(),
    poll: ZPollA.nullable().optional(),
    firstComment: ZFirstComment.nullable().optional().meta({
      description:
        'Posted once the post and its thread are out: a comment (LinkedIn) or a reply to the last post (X, Threads, Bluesky, Mastodon). null removes it.',
    }),
  },
  { error: 'the body must be a JSON object' },
);
export type TCreatePostA = z.output<typeof ZCreatePostA>;

/** Networks that publish polls natively; elsewhere a poll would be silently dropped, so it is refused. */
const POLL_PLATFORMS: readonly TPlatform[] = ['twitter', 'mastodon'];

function mediaFromList(
  list: { url: string; altText?: string | undefined }[],
  field: string,
  issues: TFieldIssue[],
): TMedia | null {
  if (list.length === 0) return null;
  const videos = list.filter((m) => isVideoUrl(m.url));
  if (videos.length > 0 && (videos.length > 1 || list.length > 1)) {
    issues.push({ field, message: 'may hold up to 4 images or a single video, not both' });
    return null;
  }
  const [video] = videos;
  if (video) return { images: [], video: { url: video.url } };
  return {
    images: list.map((m) => ({ url: m.url, ...(m.altText !== undefined ? { altText: m.altText } : {}) })),
    video: null,
  };
}

function pick<T>(
  camel: T | undefined,
  snake: T | undefined,
  names: [string, string],
  issues: TFieldIssue[],
): T | undefined {
  if (camel !== undefined && snake !== undefined && JSON.stringify(camel) !== JSON.stringify(snake)) {
    issues.push({ field: names[0], message: `conflicts with ${names[1]}; send only one of them` });
  }
  return camel !== undefined ? camel : snake;
}

/**
 * Parses a Variant A CreatePost body into post changes, applying the rules the schema alone cannot:
 * aliases, mutually exclusive modes, a future schedule, polls only where networks support them, and
 * each network's text limit (twitter: 280 weighted, links 23).
 */
export function parseCreatePostA(body: unknown, now: Date): TPostChanges {
  const parsed = ZCreatePostA.safeParse(body);
  if (!parsed.success) throw validationError(zodIssues(parsed.error));
  const input = parsed.data;
  const issues: TFieldIssue[] = [];

  const scheduledFor = pick(
    input.scheduledFor,
    input.scheduled_for,
    ['scheduledFor', 'scheduled_for'],
    issues,
  );
  const queueStatus = pick(input.queueStatus, input.queue_status, ['queueStatus', 'queue_status'], issues);
  const mediaList = pick(input.mediaUrls, input.media, ['mediaUrls', 'media'], issues);
  const scheduledField = input.scheduledFor !== undefined ? 'scheduledFor' : 'scheduled_for';

  const future = futureIssue(scheduledFor, now, scheduledField);
  if (future) issues.push(future);
  if (scheduledFor && queueStatus) {
    issues.push({
      field: 'queueStatus',
      message: `cannot be combined with ${scheduledField}; a post is either scheduled or queued`,
    });
  }
  if (input.published === true && (scheduledFor || queueStatus)) {
    issues.push({
      field: 'published',
      message: 'true publishes now and cannot be combined with scheduledFor or queueStatus',
    });
  }

  const media = mediaList
    ? mediaFromList(mediaList, input.mediaUrls !== undefined ? 'mediaUrls' : 'media', issues)
    : undefined;
  const segments: TSegment[] | undefined = input.segments?.map((segment, i) => ({
    content: segment.content,
    media: segment.mediaUrls ? mediaFromList(segment.mediaUrls, `segments.${i}.mediaUrls`, issues) : null,
  }));

  if (input.poll) {
    const unsupported = input.platforms.filter((p) => !POLL_PLATFORMS.includes(p));
    if (unsupported.length > 0) {
      issues.push({
        field: 'poll',
        message: `is supported on twitter and mastodon only, not on ${unsupported.join(', ')}`,
      });
    }
    if (media) issues.push({ field: 'poll', message: 'cannot be combined with mediaUrls' });
  }

  const texts = [input.content, ...(segments ?? []).map((s) => s.content)];
  for (const v of findTextViolations(input.platforms, texts)) {
    issues.push({
      field: v.segmentIndex === 0 ? 'content' : `segments.${v.segmentIndex - 1}.content`,
      message: `${describeViolation(v)}${v.platform === 'twitter' ? ' (links count 23)' : ''}`,
    });
  }
  if (issues.length > 0) throw validationError(issues);

  return {
    content: input.content,
    platforms: input.platforms,
    ...(scheduledFor !== undefined ? { scheduledFor } : {}),
    ...(queueStatus !== undefined ? { queueState: queueStatus } : {}),
    ...(media !== undefined ? { media } : {}),
    ...(segments !== undefined ? { segments: segments.length > 0 ? segments : null } : {}),
    ...(input.poll !== undefined ? { poll: input.poll } : {}),
    ...(input.published !== undefined ? { publishNow: input.published } : {}),
    ...(input.firstComment !== undefined ? { firstComment: input.firstComment } : {}),
    countsTwitterAllowance: true,
  };
}

/** GET /api/posts `status` query (optional). */
export const ZListStatusA = z.enum(['queued', 'pending'], { error: 'must be queued or pending' });

/**
 * The most posts one GET /api/posts answer holds (the spec says "all posts"; see the README's Decisions):
 * every post of an account up to this many, read from the database in pages and written as they come;
 * `hasMore` and `nextOffset` lead to the rest of a larger account.
 */
export const MAX_LIST_A = 1000;

export const ZListQueryA = z.object({
  status: ZListStatusA.optional(),
  limit: pageLimitQuery(MAX_LIST_A, MAX_LIST_A),
  offset: pageOffsetQuery(),
});

export function parseListQueryA(query: Record<string, unknown>): {
  queueState: 'queued' | 'pending' | undefined;
  limit: number;
  offset: number;
} {
  const clean = givenQueryValues(query);
  const parsed = ZListQueryA.safeParse(clean);
  if (!parsed.success) throw validationError(zodIssues(parsed.error));
  const { status, limit, offset } = parsed.data;
  return { queueState: status, limit, offset };
}

/** `deleteFromPlatforms` query flag of DELETE /api/posts/{id}: `true`/`false` (or 1/0); empty or omitted is true. */
export const ZDeleteFromPlatforms = z
  .enum(['true', 'false', '1', '0'])
  .meta({ description: 'Also delete the published copies where the network allows it. Default true.' });

export function parseDeleteFromPlatforms(value: unknown): boolean {
  if (value === undefined || value === '') return true;
  const parsed = ZDeleteFromPlatforms.safeParse(value);
  if (!parsed.success) {
    throw new AppError('validation_error', 'deleteFromPlatforms: must be true or false', {
      issues: [{ field: 'deleteFromPlatforms', message: 'must be true or false' }],
    });
  }
  return parsed.data === 'true' || parsed.data === '1';
}
