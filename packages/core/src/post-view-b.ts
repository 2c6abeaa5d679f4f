import type { TMedia, TPostRecord, TTargetRecord } from './post-model.js';

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

export type TPlatformResultB =
  | { success: true; post_id: string; post_url: string }
  | { success: false; error: string };

/** Only finished networks appear: results fill in as each network completes. */
function platformResults(targets: TTargetRecord[]): Record<string, TPlatformResultB> | null {
  const out: Record<string, TPlatformResultB> = {};
  for (const t of targets) {
    if (t.status === 'succeeded') {
      out[t.platform] = { success: true, post_id: t.remotePostId ?? '', post_url: t.remoteUrl ?? '' };
    } else if (t.status === 'failed' || t.status === 'unknown') {
      out[t.platform] = { success: false, error: t.error ?? 'Publishing failed' };
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
    platform_results: platformResults(post.targets),
    created_at: post.createdAt.toISOString(),
    updated_at: post.updatedAt.toISOString(),
    published_at: post.publishedAt?.toISOString() ?? null,
  };
}
export type TPostViewB = ReturnType<typeof presentPostB>;
