import { z } from 'zod';
import { firstCommentResultB, ZFirstCommentResultB } from './first-comment.js';
import { PLATFORMS } from './platforms.js';
import type { TMedia, TPostRecord, TTargetRecord } from './post-model.js';
import { POST_STATUSES } from './post-state.js';

function mediaB(media: TMedia | null) {
  if (!media) return null;
  return {
    images: media.images.map((i) => ({
      url: i.url,
      ...(i.altText !== undefined ? { alt_text: i.altText } : {}),
    })),
    video: media.video
      ? {
          url: media.video.url,
          ...(media.video.thumbnailUrl ? { thumbnail_url: media.video.thumbnailUrl } : {}),
        }
      : null,
  };
}

function mediaUrls(media: TMedia | null): string[] {
  if (!media) return [];
  return media.video ? [media.video.url] : media.images.map((i) => i.url);
}

type TFirstCommentB = { first_comment?: NonNullable<ReturnType<typeof firstCommentResultB>> };
export type TPlatformResultB =
  | ({
      success: true;
      post_id: string;
      post_url: string;
      resolved_by?: 'readback';
      note?: string;
    } & TFirstCommentB)
  | ({ success: false; error: string } & TFirstCommentB);

/**
 * A success whose answer was lost and was learned by reading the network back carries `errorKind`
 * `readback` on its target (README, Decisions); shown as `resolved_by` / `resolvedBy`.
 */
export const RESOLVED_BY_READBACK = 'readback';

function firstCommentOf(t: TTargetRecord): TFirstCommentB {
  const result = firstCommentResultB(t.firstComment);
  return result ? { first_comment: result } : {};
}

/** Only finished networks appear: results fill in as each network completes. */
function platformResults(targets: TTargetRecord[]): Record<string, TPlatformResultB> | null {
  const out: Record<string, TPlatformResultB> = {};
  for (const t of targets) {
    if (t.status === 'succeeded') {
      out[t.platform] = {
        success: true,
        post_id: t.remotePostId ?? '',
        post_url: t.remoteUrl ?? '',
        ...(t.errorKind === RESOLVED_BY_READBACK ? { resolved_by: 'readback' as const } : {}),
        // A success the network qualified (a YouTube video locked to private) keeps its note in `error`.
        ...(t.error ? { note: t.error } : {}),
        ...firstCommentOf(t),
      };
    } else if (t.status === 'failed' || t.status === 'unknown') {
      out[t.platform] = { success: false, error: t.error ?? 'Publishing failed', ...firstCommentOf(t) };
    }
  }
  return Object.keys(out).length > 0 ? out : null;
}

/** Variant B's post; also the `data.post` of webhook events. */
export function presentPostB(post: TPostRecord) {
  return {
    id: post.id,
    content: post.content,
    platforms: post.platforms,
    status: post.status,
    scheduled_for: post.scheduledFor?.toISOString() ?? null,
    media: mediaB(post.media),
    segments: post.segments
      ? post.segments.map((s) => ({ content: s.content, media_urls: mediaUrls(s.media) }))
      : null,
    // Only on a post that has one: the spec's Post keeps its exact keys otherwise.
    ...(post.firstComment !== null ? { first_comment: post.firstComment } : {}),
    platform_results: platformResults(post.targets),
    created_at: post.createdAt.toISOString(),
    updated_at: post.updatedAt.toISOString(),
    published_at: post.publishedAt?.toISOString() ?? null,
  };
}
export type TPostViewB = ReturnType<typeof presentPostB>;

// Response schema (OpenAPI): the shape `presentPostB` returns, checked against it at compile time
// (`satisfies` below) and against real responses in apps/api/test/openapi.test.ts.

export const ZPlatformResultB = z.union([
  z.object({
    success: z.literal(true),
    post_id: z.string(),
    post_url: z.string(),
    resolved_by: z.literal('readback').optional().meta({
      description:
        "Present when the network's answer was lost and the post was found by reading the network back.",
    }),
    note: z.string().optional().meta({
      description:
        'Present when the network published with a qualification (a YouTube video locked to private).',
    }),
    first_comment: ZFirstCommentResultB.optional(),
  }),
  z.object({ success: z.literal(false), error: z.string(), first_comment: ZFirstCommentResultB.optional() }),
]);

export const ZPostViewB = z.object({
  id: z.string().meta({ description: 'Post identifier (a UUID).' }),
  content: z.string(),
  platforms: z.array(z.enum(PLATFORMS)),
  status: z.enum(POST_STATUSES),
  scheduled_for: z.iso.datetime().nullable(),
  media: z
    .object({
      images: z.array(z.object({ url: z.string(), alt_text: z.string().optional() })),
      video: z.object({ url: z.string(), thumbnail_url: z.string().optional() }).nullable(),
    })
    .nullable(),
  segments: z
    .array(z.object({ content: z.string(), media_urls: z.array(z.string()) }))
    .nullable()
    .meta({ description: 'Thread replies; null for a single post.' }),
  first_comment: z
    .string()
    .optional()
    .meta({ description: 'Posted once the post and its thread are out; absent for none.' }),
  platform_results: z
    .partialRecord(z.enum(PLATFORMS), ZPlatformResultB)
    .nullable()
    .meta({ description: 'Per network, filled in as each network completes.' }),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
  published_at: z.iso.datetime().nullable(),
});
presentPostB satisfies (post: TPostRecord) => z.output<typeof ZPostViewB>;
