import { AppError, type TErrorCode, type TFieldIssue } from './app-error.js';
import { findMediaViolations } from './media-rules.js';
import type { TPlatform } from './platforms.js';
import { postTexts, type TMedia, type TSegment } from './post-model.js';
import { findTextViolations } from './text-length.js';

export interface TPublishable {
  content: string;
  platforms: TPlatform[];
  media: TMedia | null;
  segments: TSegment[] | null;
}

export interface TPublishProblems {
  /** Text over a network's limit (the text each network will actually get, counters included). */
  tooLong: (TFieldIssue & { platform: TPlatform })[];
  /** Media a network cannot take (e.g. YouTube without a video). */
  media: (TFieldIssue & { platform: TPlatform })[];
  /** Listed networks without an active connected account. */
  missingAccounts: TPlatform[];
}

/**
 * What would stop a post from publishing, checked at publish time (Variant B rule 5) and when a
 * scheduled or queued post comes due.
 */
export function findPublishProblems(post: TPublishable, connected: ReadonlySet<TPlatform>): TPublishProblems {
  const tooLong = findTextViolations(post.platforms, postTexts(post)).map((v) => ({
    platform: v.platform,
    field: v.segmentIndex === 0 ? 'content' : `segments.${v.segmentIndex - 1}.content`,
    message: `is ${v.length} characters for ${v.platform}, over its limit of ${v.max}`,
  }));
  const media: TPublishProblems['media'] = [];
  for (const platform of post.platforms) {
    const reason = findMediaViolations(platform, post.media);
    if (reason) media.push({ platform, field: 'media', message: reason });
    // Each segment goes out as its own post (a reply or a numbered post), so it meets the same rules.
    for (const [i, segment] of (post.segments ?? []).entries()) {
      const segmentReason = findMediaViolations(platform, segment.media);
      if (segmentReason) media.push({ platform, field: `segments.${i}.media`, message: segmentReason });
    }
  }
  return { tooLong, media, missingAccounts: post.platforms.filter((p) => !connected.has(p)) };
}

export function hasPublishProblems(p: TPublishProblems): boolean {
  return p.tooLong.length > 0 || p.media.length > 0 || p.missingAccounts.length > 0;
}

/** One error for all problems; its code is the first kind found, its issues list every problem. */
export function publishProblemsError(p: TPublishProblems): AppError {
  const missing: TFieldIssue[] = p.missingAccounts.map((platform) => ({
    field: 'platforms',
    message: `${platform} has no active connected account`,
  }));
  const issues = [...p.tooLong, ...p.media].map(({ field, message }) => ({ field, message })).concat(missing);
  const [code, message, fix]: [TErrorCode, string, string] =
    p.tooLong.length > 0
      ? [
          'content_too_long',
          `${p.tooLong[0]?.field ?? 'content'} exceeds the character limit of ${[...new Set(p.tooLong.map((t) => t.platform))].join(', ')}: ${p.tooLong[0]?.message ?? ''}`,
          'Shorten the text (or split it into segments) so it fits every listed network.',
        ]
      : p.media.length > 0
        ? [
            'media_not_supported',
            `${p.media[0]?.field ?? 'media'}: ${p.media[0]?.message ?? 'not supported'}`,
            'Add the media the network needs, or remove that network.',
          ]
        : [
            'no_connected_account',
            `platforms: no valid connected account for ${p.missingAccounts.join(', ')}`,
            'Connect (or reconnect) an account for each listed network, or remove the network from the post.',
          ];
  return new AppError(code, message, {
    issues,
    fix,
    details: {
      platforms: [...new Set([...p.tooLong, ...p.media].map((x) => x.platform).concat(p.missingAccounts))],
    },
  });
}

/** The per-network error text stored when a due scheduled or queued post cannot publish. */
export function problemForPlatform(p: TPublishProblems, platform: TPlatform): string | null {
  if (p.missingAccounts.includes(platform)) {
    return `No active ${platform} account is connected. Connect or reconnect the account, then publish again.`;
  }
  const long = p.tooLong.find((t) => t.platform === platform);
  if (long) return `${long.field} ${long.message}. Shorten the text and publish again.`;
  const media = p.media.find((m) => m.platform === platform);
  if (media)
    return `${media.field === 'media' ? '' : `${media.field}: `}${media.message}. Fix the media and publish again.`;
  return null;
}
