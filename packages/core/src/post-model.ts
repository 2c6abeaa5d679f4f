import type { TPlatform } from './platforms.js';
import type { TPostStatus, TQueueState, TTargetStatus } from './post-state.js';

export interface TImage {
  url: string;
  altText?: string;
}
export interface TVideo {
  url: string;
  thumbnailUrl?: string;
}
/** Internal media of a post or segment: up to 4 images, or one video, never both. */
export interface TMedia {
  images: TImage[];
  video: TVideo | null;
}
export interface TSegment {
  content: string;
  media: TMedia | null;
}
export interface TPoll {
  options: string[];
  durationMinutes: number;
}

/** Per-network outcome of a post, as stored (one row per network). */
export interface TTargetRecord {
  platform: TPlatform;
  status: TTargetStatus;
  remotePostId: string | null;
  remoteUrl: string | null;
  error: string | null;
  errorKind: string | null;
  publishedAt: Date | null;
  /** The first comment's record on this network (a segment row), once it was sent or settled. */
  firstComment?: TFirstCommentRecord | null;
}

/** A first comment's outcome on one network, as its segment row holds it. */
export interface TFirstCommentRecord {
  status: 'sending' | 'sent' | 'failed' | 'unknown';
  remoteId: string | null;
  remoteUrl: string | null;
  error: string | null;
}

/** A post as both presenters read it. */
export interface TPostRecord {
  id: string;
  accountId: string;
  content: string;
  platforms: TPlatform[];
  status: TPostStatus;
  queueState: TQueueState | null;
  queuedAt: Date | null;
  scheduledFor: Date | null;
  media: TMedia | null;
  segments: TSegment[] | null;
  poll: TPoll | null;
  publishAttempt: number;
  /** Posted after the post and its thread (first-comment.ts); null for none. */
  firstComment: string | null;
  publishedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
  targets: TTargetRecord[];
}

/**
 * A create or update request after variant-specific parsing. `undefined` means "not given"
 * (keep the current value on update); `null` means "clear it".
 */
export interface TPostChanges {
  content?: string;
  platforms?: TPlatform[];
  scheduledFor?: Date | null;
  media?: TMedia | null;
  segments?: TSegment[] | null;
  poll?: TPoll | null;
  firstComment?: string | null;
  queueState?: TQueueState | null;
  /** Variant A `published: true`: publish now. */
  publishNow?: boolean;
  /**
   * Variant A and MCP: when the post fires as scheduled or queued, a twitter publish takes a unit of the
   * plan's monthly allowance (publish requests take theirs in the API).
   */
  countsTwitterAllowance?: boolean;
}

const VIDEO_EXTENSIONS = /\.(mp4|mov|m4v|webm|avi|mkv|mpeg|mpg)$/i;

/**
 * URL-only media lists (Variant B `media_urls`, Variant A `mediaUrls`) carry no type, so a URL whose
 * path ends in a video extension is a video and anything else an image.
 */
export function isVideoUrl(url: string): boolean {
  try {
    return VIDEO_EXTENSIONS.test(new URL(url).pathname);
  } catch {
    return false;
  }
}

export function mediaIsEmpty(media: TMedia | null | undefined): boolean {
  return !media || (media.images.length === 0 && !media.video);
}

/** Main text followed by segment texts: what text limits and thread plans work on. */
export function postTexts(post: { content: string; segments: TSegment[] | null }): string[] {
  return [post.content, ...(post.segments ?? []).map((s) => s.content)];
}
