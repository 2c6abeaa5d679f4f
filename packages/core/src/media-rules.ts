import type { TPlatform } from './platforms.js';

export type TMediaRequirement = 'nothing' | 'image_or_video' | 'video';

export interface TMediaRule {
  requires: TMediaRequirement;
  maxImages: number;
  allowsVideo: boolean;
}

/** Posts carry at most 4 images, so networks that allow more (carousels, albums) are capped at 4. */
const POST_MAX_IMAGES = 4;

export const NETWORK_MEDIA_RULES: Record<TPlatform, TMediaRule> = {
  twitter: { requires: 'nothing', maxImages: 4, allowsVideo: true },
  bluesky: { requires: 'nothing', maxImages: 4, allowsVideo: true },
  mastodon: { requires: 'nothing', maxImages: 4, allowsVideo: true },
  threads: { requires: 'nothing', maxImages: POST_MAX_IMAGES, allowsVideo: true },
  linkedin: { requires: 'nothing', maxImages: POST_MAX_IMAGES, allowsVideo: true },
  facebook: { requires: 'nothing', maxImages: POST_MAX_IMAGES, allowsVideo: true },
  instagram: { requires: 'image_or_video', maxImages: POST_MAX_IMAGES, allowsVideo: true },
  tiktok: { requires: 'image_or_video', maxImages: POST_MAX_IMAGES, allowsVideo: true },
  youtube: { requires: 'video', maxImages: 0, allowsVideo: true },
  discord: { requires: 'nothing', maxImages: POST_MAX_IMAGES, allowsVideo: true },
  slack: { requires: 'nothing', maxImages: POST_MAX_IMAGES, allowsVideo: true },
  telegram: { requires: 'nothing', maxImages: POST_MAX_IMAGES, allowsVideo: true },
};

export type TMediaShape = { images: { url: string }[]; video: { url: string } | null } | null;

/** Why `platform` cannot take this media, or null when it can. */
export function findMediaViolations(platform: TPlatform, media: TMediaShape): string | null {
  const rule = NETWORK_MEDIA_RULES[platform];
  const imageCount = media?.images.length ?? 0;
  const hasVideo = media?.video != null;

  if (hasVideo && imageCount > 0) return 'a video cannot be combined with images';
  if (rule.requires === 'video' && !hasVideo) return `${platform} needs a video`;
  if (rule.requires === 'image_or_video' && !hasVideo && imageCount === 0) {
    return `${platform} needs an image or a video`;
  }
  if (hasVideo && !rule.allowsVideo) return `${platform} does not accept video`;
  if (imageCount > rule.maxImages) {
    return rule.maxImages === 0
      ? `${platform} does not accept images`
      : `${platform} accepts at most ${rule.maxImages} images, got ${imageCount}`;
  }
  return null;
}
