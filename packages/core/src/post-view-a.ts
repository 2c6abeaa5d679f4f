import type { TMedia, TPostRecord, TTargetRecord } from './post-model.js';

export type TPlatformPostIdA = { id: string; url: string } | { error: string };

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
      out[t.platform] = { id: t.remotePostId, url: t.remoteUrl ?? '' };
    else if ((t.status === 'failed' || t.status === 'unknown') && t.error)
      out[t.platform] = { error: t.error };
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
  };
}
export type TPostViewA = ReturnType<typeof presentPostA>;

export function presentPublishResultA(target: TTargetRecord) {
  const success = target.status === 'succeeded';
  return {
    platform: target.platform,
    success,
    ...(success && target.remoteUrl ? { postUrl: target.remoteUrl } : {}),
    ...(!success && target.error ? { error: target.error } : {}),
  };
}
