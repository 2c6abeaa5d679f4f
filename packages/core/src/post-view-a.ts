import { z } from 'zod';
import { firstCommentResultA, ZFirstCommentResultA } from './first-comment.js';
import { PLATFORMS } from './platforms.js';
import type { TMedia, TPostRecord, TTargetRecord } from './post-model.js';
import { QUEUE_STATES } from './post-state.js';
import { RESOLVED_BY_READBACK } from './post-view-b.js';

type TFirstCommentA = { firstComment?: NonNullable<ReturnType<typeof firstCommentResultA>> };
export type TPlatformPostIdA =
  | ({ id: string; url: string; resolvedBy?: 'readback'; note?: string } & TFirstCommentA)
  | ({ error: string } & TFirstCommentA);

function firstCommentOf(t: TTargetRecord): TFirstCommentA {
  const result = firstCommentResultA(t.firstComment);
  return result ? { firstComment: result } : {};
}

const resolvedBy = (t: TTargetRecord) =>
  t.errorKind === RESOLVED_BY_READBACK ? { resolvedBy: 'readback' as const } : {};
/** A success the network qualified (a YouTube video locked to private) keeps its note in `error`. */
const noteOf = (t: TTargetRecord) => (t.error ? { note: t.error } : {});

function mediaListA(media: TMedia | null) {
  if (!media) return [];
  if (media.video) return [{ url: media.video.url }];
  return media.images.map((i) => ({
    url: i.url,
    ...(i.altText !== undefined ? { altText: i.altText } : {}),
  }));
}

function platformPostIds(targets: TTargetRecord[]): Record<string, TPlatformPostIdA> | null {
  const out: Record<string, TPlatformPostIdA> = {};
  for (const t of targets) {
    if (t.status === 'succeeded' && t.remotePostId)
      out[t.platform] = {
        id: t.remotePostId,
        url: t.remoteUrl ?? '',
        ...resolvedBy(t),
        ...noteOf(t),
        ...firstCommentOf(t),
      };
    else if ((t.status === 'failed' || t.status === 'unknown') && t.error)
      out[t.platform] = { error: t.error, ...firstCommentOf(t) };
  }
  return Object.keys(out).length > 0 ? out : null;
}

/**
 * Variant A's post: the spec's fields, plus `mediaUrls`, `segments`, `poll` and `updatedAt` so a client
 * that PUTs a CreatePost body back can see what it would keep (see README, Decisions).
 */
export function presentPostA(post: TPostRecord) {
  return {
    id: post.id,
    content: post.content,
    platforms: post.platforms,
    scheduledFor: post.scheduledFor?.toISOString() ?? null,
    published: post.status === 'published',
    queueStatus: post.queueState,
    platformPostIds: platformPostIds(post.targets),
    createdAt: post.createdAt.toISOString(),
    updatedAt: post.updatedAt.toISOString(),
    mediaUrls: mediaListA(post.media),
    segments: (post.segments ?? []).map((s) => ({ content: s.content, mediaUrls: mediaListA(s.media) })),
    poll: post.poll,
    ...(post.firstComment !== null ? { firstComment: post.firstComment } : {}),
  };
}
export type TPostViewA = ReturnType<typeof presentPostA>;

export function presentPublishResultA(target: TTargetRecord) {
  const success = target.status === 'succeeded';
  return {
    platform: target.platform,
    success,
    ...(success && target.remoteUrl ? { postUrl: target.remoteUrl } : {}),
    ...(success ? { ...resolvedBy(target), ...noteOf(target) } : {}),
    ...(!success && target.error ? { error: target.error } : {}),
    ...firstCommentOf(target),
  };
}

// Response schemas (OpenAPI): the shapes the presenters above return, checked against them at compile time
// (`satisfies` below) and against real responses in apps/api/test/openapi.test.ts.

const ZMediaViewA = z.object({ url: z.string(), altText: z.string().optional() });

const ZResolvedByA = z.literal('readback').optional().meta({
  description:
    "Present when the network's answer was lost and the post was found by reading the network back.",
});

const ZNoteA = z.string().optional().meta({
  description: 'Present when the network published with a qualification (a YouTube video locked to private).',
});

export const ZPlatformPostIdA = z.union([
  z.object({
    id: z.string(),
    url: z.string(),
    resolvedBy: ZResolvedByA,
    note: ZNoteA,
    firstComment: ZFirstCommentResultA.optional(),
  }),
  z.object({ error: z.string(), firstComment: ZFirstCommentResultA.optional() }),
]);

export const ZPostViewA = z.object({
  id: z.string().meta({ description: 'Post identifier (a UUID).' }),
  content: z.string(),
  platforms: z.array(z.enum(PLATFORMS)),
  scheduledFor: z.iso.datetime().nullable(),
  published: z.boolean().meta({ description: 'True once published.' }),
  queueStatus: z.enum(QUEUE_STATES).nullable(),
  platformPostIds: z
    .partialRecord(z.enum(PLATFORMS), ZPlatformPostIdA)
    .nullable()
    .meta({ description: 'Per network: an id and url, or an error.' }),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
  mediaUrls: z.array(ZMediaViewA),
  segments: z.array(z.object({ content: z.string(), mediaUrls: z.array(ZMediaViewA) })),
  poll: z.object({ options: z.array(z.string()), durationMinutes: z.int() }).nullable(),
  firstComment: z
    .string()
    .optional()
    .meta({ description: 'Posted once the post and its thread are out; absent for none.' }),
});
presentPostA satisfies (post: TPostRecord) => z.output<typeof ZPostViewA>;

export const ZPublishResultA = z.object({
  platform: z.enum(PLATFORMS),
  success: z.boolean(),
  postUrl: z.string().optional().meta({ description: 'Present on success.' }),
  resolvedBy: ZResolvedByA,
  note: ZNoteA,
  error: z.string().optional().meta({ description: 'What failed and what to do next.' }),
  firstComment: ZFirstCommentResultA.optional(),
});
presentPublishResultA satisfies (target: TTargetRecord) => z.output<typeof ZPublishResultA>;
