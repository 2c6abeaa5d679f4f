import type { TPlatform } from './platforms.js';

export type TMediaRequirement = 'nothing' | 'image_or_video' | 'video';

export interface TMediaRule {
  requires: TMediaRequirement;
  /** Images one post (or one segment) may carry here; posts carry at most 4 in this service. */
  maxImages: number;
  allowsVideo: boolean;
  /**
   * Image file extensions the network takes, judged by the URL's path when it ends in a known image
   * extension; null means any image type (the downloaded bytes are checked either way).
   */
  imageExtensions: readonly string[] | null;
  /** The same for video; null means any video type. */
  videoExtensions: readonly string[] | null;
  /** An animated GIF must be the post's only media item (X: "4 photos, 1 animated GIF or 1 video"). */
  gifAlone: boolean;
  /** The network's page these rules come from. */
  docs: string;
}

/** Posts carry at most 4 images, so networks that allow more (carousels, albums) are capped at 4. */
const POST_MAX_IMAGES = 4;

// Read 2026-11-24 from each network's documentation (the page is in `docs`). Counts beyond 4 that a
// network allows (Threads and LinkedIn 20, Instagram 10, Discord 10, TikTok 35 photos) are capped at
// this service's 4. "Images or one video, not both" is the post model's own rule (spec) and holds everywhere.
export const NETWORK_MEDIA_RULES: Record<TPlatform, TMediaRule> = {
  // "You can attach up to 4 photos, 1 animated GIF or 1 video in a Post"; JPG, PNG, GIF, WEBP.
  twitter: {
    requires: 'nothing',
    maxImages: 4,
    allowsVideo: true,
    imageExtensions: ['jpg', 'jpeg', 'png', 'gif', 'webp'],
    videoExtensions: ['mp4', 'mov'],
    gifAlone: true,
    docs: 'https://docs.x.com/x-api/media/quickstart/best-practices',
  },
  // app.bsky.embed.images: maxLength 4, blob accept image/*. One video per post through the video
  // service, which takes .mp4, .mpeg, .webm and .mov (https://bsky.social/about/blog/09-11-2024-video,
  // https://docs.bsky.app/docs/tutorials/video); .mpeg is left out because the media fetcher cannot
  // recognise an MPEG program stream by its bytes, so such a post would only fail at publish.
  bluesky: {
    requires: 'nothing',
    maxImages: 4,
    allowsVideo: true,
    imageExtensions: null,
    videoExtensions: ['mp4', 'webm', 'mov'],
    gifAlone: false,
    docs: 'https://github.com/bluesky-social/atproto/blob/main/lexicons/app/bsky/embed/images.json',
  },
  // media_ids: up to 4 (the instance's configuration.statuses.max_media_attachments); a video cannot be
  // attached together with other media.
  mastodon: {
    requires: 'nothing',
    maxImages: 4,
    allowsVideo: true,
    imageExtensions: null,
    videoExtensions: null,
    gifAlone: false,
    docs: 'https://docs.joinmastodon.org/methods/statuses/#create',
  },
  // Image posts: JPEG and PNG; video MOV or MP4; carousels of up to 20 items.
  threads: {
    requires: 'nothing',
    maxImages: POST_MAX_IMAGES,
    allowsVideo: true,
    imageExtensions: ['jpg', 'jpeg', 'png'],
    videoExtensions: ['mp4', 'mov'],
    gifAlone: false,
    docs: 'https://developers.facebook.com/docs/threads/overview#media-specifications',
  },
  // Images API: JPG, GIF, PNG (GIF up to 250 frames); Videos API: MP4; multi-image posts of 2 to 20.
  linkedin: {
    requires: 'nothing',
    maxImages: POST_MAX_IMAGES,
    allowsVideo: true,
    imageExtensions: ['jpg', 'jpeg', 'png', 'gif'],
    videoExtensions: ['mp4'],
    gifAlone: false,
    docs: 'https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/images-api',
  },
  // Page photos: JPEG, BMP, PNG, GIF, TIFF; one video per video post, MP4: the Resumable Upload API the video
  // is uploaded with takes `video/mp4` only (https://developers.facebook.com/docs/graph-api/guides/upload).
  facebook: {
    requires: 'nothing',
    maxImages: POST_MAX_IMAGES,
    allowsVideo: true,
    imageExtensions: ['jpg', 'jpeg', 'png', 'gif', 'bmp', 'tif', 'tiff'],
    videoExtensions: ['mp4'],
    gifAlone: false,
    docs: 'https://developers.facebook.com/docs/graph-api/reference/page/photos/',
  },
  // A container needs image_url (JPEG is the only image format) or video_url (MOV, MP4); carousels to 10.
  instagram: {
    requires: 'image_or_video',
    maxImages: POST_MAX_IMAGES,
    allowsVideo: true,
    imageExtensions: ['jpg', 'jpeg'],
    videoExtensions: ['mp4', 'mov'],
    gifAlone: false,
    docs: 'https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-user/media',
  },
  // Video (MP4, WebM, MOV) or a photo post (JPG, JPEG, WEBP; up to 35 photos): text alone is not a post.
  tiktok: {
    requires: 'image_or_video',
    maxImages: POST_MAX_IMAGES,
    allowsVideo: true,
    imageExtensions: ['jpg', 'jpeg', 'webp'],
    videoExtensions: ['mp4', 'webm', 'mov'],
    gifAlone: false,
    docs: 'https://developers.tiktok.com/doc/content-posting-api-media-transfer-guide',
  },
  // videos.insert uploads exactly one video; images are not a YouTube post.
  youtube: {
    requires: 'video',
    maxImages: 0,
    allowsVideo: true,
    imageExtensions: null,
    videoExtensions: null,
    gifAlone: false,
    docs: 'https://developers.google.com/youtube/v3/docs/videos/insert',
  },
  // Chat networks take files as attachments (Discord up to 10 per message, Slack files, Telegram albums).
  discord: {
    requires: 'nothing',
    maxImages: POST_MAX_IMAGES,
    allowsVideo: true,
    imageExtensions: null,
    videoExtensions: null,
    gifAlone: false,
    docs: 'https://discord.com/developers/docs/reference#uploading-files',
  },
  slack: {
    requires: 'nothing',
    maxImages: POST_MAX_IMAGES,
    allowsVideo: true,
    imageExtensions: null,
    videoExtensions: null,
    gifAlone: false,
    docs: 'https://docs.slack.dev/reference/methods/files.getUploadURLExternal',
  },
  telegram: {
    requires: 'nothing',
    maxImages: POST_MAX_IMAGES,
    allowsVideo: true,
    imageExtensions: null,
    videoExtensions: null,
    gifAlone: false,
    docs: 'https://core.telegram.org/bots/api#sendmediagroup',
  },
};

export type TMediaShape = { images: { url: string }[]; video: { url: string } | null } | null;

/** The item a problem is about: an image by its index, the video, or the media as a whole (null). */
export type TMediaItemRef = { kind: 'image'; index: number } | { kind: 'video' } | null;

export interface TMediaProblem {
  platform: TPlatform;
  /** Index of the segment, or null for the main post. */
  segment: number | null;
  item: TMediaItemRef;
  message: string;
  /**
   * True when media the network needs is missing (YouTube without a video): a draft may still get it,
   * so this is checked when the post is due to publish, not when a draft is saved.
   */
  missing: boolean;
}

const KNOWN_IMAGE_EXTENSIONS = new Set([
  'jpg',
  'jpeg',
  'png',
  'gif',
  'webp',
  'bmp',
  'tif',
  'tiff',
  'heic',
  'heif',
  'avif',
]);
const KNOWN_VIDEO_EXTENSIONS = new Set(['mp4', 'mov', 'm4v', 'webm', 'avi', 'mkv', 'mpeg', 'mpg']);

/** The lower-case extension of a URL's path, or null when there is none. */
function extensionOf(url: string): string | null {
  try {
    const match = /\.([a-z0-9]{2,5})$/i.exec(new URL(url).pathname);
    return match ? match[1]!.toLowerCase() : null;
  } catch {
    return null;
  }
}

function typeProblem(
  url: string,
  known: Set<string>,
  allowed: readonly string[] | null,
  platform: TPlatform,
  what: string,
): string | null {
  const ext = extensionOf(url);
  if (!allowed || !ext || !known.has(ext) || allowed.includes(ext)) return null;
  return `${platform} does not accept .${ext} ${what}s (it takes ${allowed.join(', ')})`;
}

/** Everything `platform` cannot take in one post's (or one segment's) media, item by item. */
function problemsOf(platform: TPlatform, media: TMediaShape, segment: number | null): TMediaProblem[] {
  const rule = NETWORK_MEDIA_RULES[platform];
  const images = media?.images ?? [];
  const video = media?.video ?? null;
  const out: TMediaProblem[] = [];
  const add = (item: TMediaItemRef, message: string, missing = false) =>
    out.push({ platform, segment, item, message, missing });

  if (video && images.length > 0) add({ kind: 'video' }, 'a video cannot be combined with images');
  if (rule.requires === 'video' && !video) {
    add(
      images.length > 0 ? { kind: 'image', index: 0 } : null,
      `${platform} needs a video`,
      images.length === 0,
    );
  }
  if (rule.requires === 'image_or_video' && !video && images.length === 0) {
    add(null, `${platform} needs an image or a video`, true);
  }
  if (video && !rule.allowsVideo) add({ kind: 'video' }, `${platform} does not accept video`);
  if (video) {
    const reason = typeProblem(video.url, KNOWN_VIDEO_EXTENSIONS, rule.videoExtensions, platform, 'video');
    if (reason) add({ kind: 'video' }, reason);
  }
  if (images.length > rule.maxImages && rule.requires !== 'video') {
    add(
      { kind: 'image', index: rule.maxImages },
      rule.maxImages === 0
        ? `${platform} does not accept images`
        : `${platform} accepts at most ${rule.maxImages} images, got ${images.length}`,
    );
  }
  for (const [index, image] of images.entries()) {
    const reason = typeProblem(image.url, KNOWN_IMAGE_EXTENSIONS, rule.imageExtensions, platform, 'image');
    if (reason) add({ kind: 'image', index }, reason);
    if (rule.gifAlone && images.length > 1 && extensionOf(image.url) === 'gif') {
      add({ kind: 'image', index }, `${platform} takes an animated GIF only as the post's single media item`);
    }
  }
  return out;
}

/** Every media problem of a post (main media and each segment's, which goes out as its own post). */
export function findMediaProblems(
  platforms: readonly TPlatform[],
  post: { media: TMediaShape; segments?: readonly { media: TMediaShape }[] | null },
): TMediaProblem[] {
  const out: TMediaProblem[] = [];
  for (const platform of platforms) {
    out.push(...problemsOf(platform, post.media, null));
    for (const [i, segment] of (post.segments ?? []).entries())
      out.push(...problemsOf(platform, segment.media, i));
  }
  return out;
}

/** Why `platform` cannot take this media, or null when it can (the first problem only). */
export function findMediaViolations(platform: TPlatform, media: TMediaShape): string | null {
  return problemsOf(platform, media, null)[0]?.message ?? null;
}

/** Field names per variant: A lists media as `mediaUrls` (video included); B has `media.images`/`media.video`. */
export type TMediaFieldStyle = 'A' | 'B';

/** The request field a problem is about, e.g. `media.images.2`, `segments.1.media_urls.0`, `mediaUrls.0`. */
export function mediaProblemField(problem: TMediaProblem, style: TMediaFieldStyle): string {
  const { item, segment } = problem;
  // In A's mediaUrls and in B's segment media_urls a video is the list's only item.
  const listIndex = item === null ? null : item.kind === 'image' ? item.index : 0;
  if (segment !== null) {
    const list = `segments.${segment}.${style === 'A' ? 'mediaUrls' : 'media_urls'}`;
    return listIndex === null ? list : `${list}.${listIndex}`;
  }
  if (style === 'A') return listIndex === null ? 'mediaUrls' : `mediaUrls.${listIndex}`;
  if (item === null) return 'media';
  return item.kind === 'video' ? 'media.video' : `media.images.${item.index}`;
}
