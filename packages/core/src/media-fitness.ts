import { findMediaProblems, type TMediaShape } from './media-rules.js';
import type { TPlatform } from './platforms.js';

/**
 * Whether library items fit each network, before a post is saved: the dashboard's composer shows it next to
 * the thumbnails. The count, combination and type rules are `findMediaProblems`, the very check post
 * creation runs (so a "does not fit" here is a 400 there); the size and duration limits below are what the
 * publisher's connectors hold each file to, known here from the item's recorded size and duration.
 */

const MB = 1024 * 1024;

export interface TNetworkFileLimits {
  /** Largest image sent as is; a larger still image is re-encoded to fit at publish (a warning, not a refusal). */
  imageBytes: number | null;
  /** The network fetches the file from its URL itself (Threads, Instagram): nothing is re-encoded, larger fails. */
  pulls?: true;
  /** Largest animated GIF: GIFs are not re-encoded, so a larger one fails at publish. */
  gifBytes: number | null;
  /** Largest video the connector sends. */
  videoBytes: number | null;
  /** Longest video, seconds; `durationHard` false when only some accounts are held to it. */
  videoSeconds: number | null;
  durationHard: boolean;
  docs: string;
}

// The byte figures are the connectors' own caps (packages/networks: X_MAX_*_BYTES, BLUESKY_MAX_*_BYTES,
// LINKEDIN_MAX_*_BYTES, FACEBOOK_MAX_VIDEO_BYTES, MASTODON_MAX_*_BYTES, and the TikTok, YouTube, Slack and
// Telegram connectors' constants); packages/networks/test/media-fitness-limits.test.ts checks the exported ones
// agree. Durations were read 2026-11-26 from the page in `docs`.
export const NETWORK_FILE_LIMITS: Record<TPlatform, TNetworkFileLimits> = {
  // Image 5 MB, GIF 15 MB, video 512 MB; videos up to 140 s (longer for X Premium accounts).
  twitter: {
    imageBytes: 5 * MB,
    gifBytes: 15 * MB,
    videoBytes: 512 * MB,
    videoSeconds: 140,
    durationHard: false,
    docs: 'https://docs.x.com/x-api/media/quickstart/best-practices',
  },
  // Image blobs fitted to 1,000,000 bytes; videos 100 MB, up to 3 minutes.
  bluesky: {
    imageBytes: 1_000_000,
    gifBytes: 1_000_000,
    videoBytes: 100_000_000,
    videoSeconds: 180,
    durationHard: true,
    docs: 'https://docs.bsky.app/docs/tutorials/video',
  },
  // Mastodon's default image limit (instances announce their own), videos to the 512 MB download cap.
  mastodon: {
    imageBytes: 16 * MB,
    gifBytes: 16 * MB,
    videoBytes: 512 * MB,
    videoSeconds: null,
    durationHard: false,
    docs: 'https://docs.joinmastodon.org/methods/instance/#v2',
  },
  // Threads fetches the file itself: images 8 MB, videos 1 GB and up to 5 minutes.
  threads: {
    imageBytes: 8 * MB,
    gifBytes: null,
    videoBytes: 1024 * MB,
    videoSeconds: 300,
    durationHard: true,
    pulls: true,
    docs: 'https://developers.facebook.com/docs/threads/overview#media-specifications',
  },
  linkedin: {
    imageBytes: 5 * MB,
    gifBytes: 5 * MB,
    videoBytes: 500 * MB,
    videoSeconds: 30 * 60,
    durationHard: true,
    docs: 'https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/videos-api',
  },
  facebook: {
    imageBytes: null,
    gifBytes: null,
    videoBytes: 512 * MB,
    videoSeconds: null,
    durationHard: false,
    docs: 'https://developers.facebook.com/docs/graph-api/guides/upload',
  },
  // Instagram fetches the file itself: images 8 MB, reels 300 MB and up to 15 minutes.
  instagram: {
    imageBytes: 8 * MB,
    gifBytes: null,
    videoBytes: 300 * MB,
    videoSeconds: 15 * 60,
    durationHard: true,
    pulls: true,
    docs: 'https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-user/media',
  },
  // The longest video depends on the creator (`max_video_post_duration_sec`, checked at publish).
  tiktok: {
    imageBytes: null,
    gifBytes: null,
    videoBytes: 512 * MB,
    videoSeconds: null,
    durationHard: false,
    docs: 'https://developers.tiktok.com/doc/content-posting-api-media-transfer-guide',
  },
  // Unverified channels upload up to 15 minutes; verified ones longer.
  youtube: {
    imageBytes: null,
    gifBytes: null,
    videoBytes: 512 * MB,
    videoSeconds: 15 * 60,
    durationHard: false,
    docs: 'https://support.google.com/youtube/answer/71673',
  },
  discord: {
    imageBytes: null,
    gifBytes: null,
    videoBytes: null,
    videoSeconds: null,
    durationHard: false,
    docs: 'https://discord.com/developers/docs/reference#uploading-files',
  },
  slack: {
    imageBytes: 50 * MB,
    gifBytes: 50 * MB,
    videoBytes: 512 * MB,
    videoSeconds: null,
    durationHard: false,
    docs: 'https://docs.slack.dev/reference/methods/files.getUploadURLExternal',
  },
  // Bots send photos up to 10 MB and other files up to 50 MB.
  telegram: {
    imageBytes: 10 * MB,
    gifBytes: 50 * MB,
    videoBytes: 50 * MB,
    videoSeconds: null,
    durationHard: false,
    docs: 'https://core.telegram.org/bots/api#sending-files',
  },
};

/** What the fitness check needs of a library item (its view in either variant has it). */
export interface TFitnessItem {
  url: string;
  type: 'image' | 'gif' | 'video';
  /** Null for media given by URL, whose size is known only when it is fetched at publish. */
  sizeBytes: number | null;
  durationS: number | null;
}

export interface TFitnessNote {
  /** `error`: saving or publishing will be refused; `warning`: it goes out, changed or only for some accounts. */
  level: 'error' | 'warning';
  message: string;
}

export interface TNetworkFitness {
  platform: TPlatform;
  /** Problems of the media as a whole (too many images, a video with images, media missing). */
  post: TFitnessNote[];
  /** One list per item, in the order given. */
  items: TFitnessNote[][];
  fits: boolean;
}

function megabytes(bytes: number): string {
  return bytes >= 1_000_000 && bytes % MB !== 0 && bytes % 1_000_000 === 0
    ? `${bytes / 1_000_000} MB`
    : `${Math.round((bytes / MB) * 10) / 10} MB`;
}

function fileNotes(platform: TPlatform, item: TFitnessItem): TFitnessNote[] {
  const limits = NETWORK_FILE_LIMITS[platform];
  const out: TFitnessNote[] = [];
  if (item.sizeBytes === null) return out;
  const size = megabytes(item.sizeBytes);
  if (item.type === 'video') {
    if (limits.videoBytes !== null && item.sizeBytes > limits.videoBytes) {
      out.push({
        level: 'error',
        message: `too large for ${platform}: ${size}, it takes videos up to ${megabytes(limits.videoBytes)}`,
      });
    }
    if (limits.videoSeconds !== null && item.durationS !== null && item.durationS > limits.videoSeconds) {
      const over = `too long for ${platform}: ${Math.round(item.durationS)} s, it takes up to ${limits.videoSeconds} s`;
      out.push(
        limits.durationHard
          ? { level: 'error', message: over }
          : { level: 'warning', message: `${over} (more for some accounts)` },
      );
    }
  } else if (item.type === 'gif') {
    if (limits.gifBytes !== null && item.sizeBytes > limits.gifBytes) {
      out.push({
        level: 'error',
        message: `too large for ${platform}: ${size}, it takes GIFs up to ${megabytes(limits.gifBytes)} (animated images are not re-encoded)`,
      });
    }
  } else if (limits.imageBytes !== null && item.sizeBytes > limits.imageBytes && limits.pulls) {
    out.push({
      level: 'error',
      message: `too large for ${platform}: ${size}, it fetches images up to ${megabytes(limits.imageBytes)} itself (nothing re-encodes them)`,
    });
  } else if (limits.imageBytes !== null && item.sizeBytes > limits.imageBytes) {
    out.push({
      level: 'warning',
      message: `larger than ${platform}'s ${megabytes(limits.imageBytes)}: it will be re-encoded to fit`,
    });
  }
  return out;
}

/**
 * For each network, whether the items (images and GIFs as the post's images, at most one video) fit, item by
 * item, as the post would be checked when created and published. `draft` leaves out "needs media" problems,
 * which creation does not refuse for a draft either.
 */
export function mediaFitness(
  platforms: readonly TPlatform[],
  items: readonly TFitnessItem[],
  options: { draft?: boolean } = {},
): TNetworkFitness[] {
  const imageIndexes: number[] = [];
  const videoIndexes: number[] = [];
  items.forEach((item, i) => {
    (item.type === 'video' ? videoIndexes : imageIndexes).push(i);
  });
  const shape: TMediaShape =
    items.length === 0
      ? null
      : {
          images: imageIndexes.map((i) => ({ url: items[i]!.url })),
          video: videoIndexes.length > 0 ? { url: items[videoIndexes[0]!]!.url } : null,
        };
  return platforms.map((platform) => {
    const post: TFitnessNote[] = [];
    const perItem: TFitnessNote[][] = items.map((item) => fileNotes(platform, item));
    if (videoIndexes.length > 1) {
      post.push({ level: 'error', message: 'a post carries at most one video' });
    }
    for (const problem of findMediaProblems([platform], { media: shape })) {
      if (problem.missing && options.draft) continue;
      const note: TFitnessNote = { level: 'error', message: problem.message };
      const index =
        problem.item === null
          ? undefined
          : problem.item.kind === 'video'
            ? videoIndexes[0]
            : imageIndexes[problem.item.index];
      if (index === undefined || problem.message.startsWith(`${platform} accepts at most`)) post.push(note);
      else perItem[index]!.push(note);
    }
    const fits = [...post, ...perItem.flat()].every((note) => note.level !== 'error');
    return { platform, post, items: perItem, fits };
  });
}
