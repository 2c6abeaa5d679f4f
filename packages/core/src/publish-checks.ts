import { AppError, type TErrorCode, type TFieldIssue } from './app-error.js';
import { findMediaProblems, mediaProblemField, type TMediaFieldStyle } from './media-rules.js';
import type { TPlatform } from './platforms.js';
import { postTexts, type TMedia, type TSegment } from './post-model.js';
import { describeViolation, findTextViolations, type TParseBudget } from './text-length.js';

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
export function findPublishProblems(
  post: TPublishable,
  connected: ReadonlySet<TPlatform>,
  style: TMediaFieldStyle = 'B',
  budget?: TParseBudget,
): TPublishProblems {
  const tooLong = findTextViolations(post.platforms, postTexts(post), budget).map((v) => ({
    platform: v.platform,
    field: v.segmentIndex === 0 ? 'content' : `segments.${v.segmentIndex - 1}.content`,
    message: describeViolation(v),
  }));
  // Each segment goes out as its own post (a reply or a numbered post), so it meets the same rules.
  const media = findMediaProblems(post.platforms, post).map((p) => ({
    platform: p.platform,
    field: mediaProblemField(p, style),
    message: p.message,
  }));
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
  if (media) return `${media.field}: ${media.message}. Fix the media and publish again.`;
  return null;
}

/**
 * Create/update check: media a listed network cannot take is refused up front (A 400, B 422, both
 * `media_not_supported`), each issue naming the item, instead of failing later at publish time.
 */
export function assertMediaFits(
  post: Omit<TPublishable, 'content'>,
  style: TMediaFieldStyle,
  { draft }: { draft: boolean },
): void {
  // A draft may lack media a network needs (it can be added before publishing, where it is checked);
  // a scheduled, queued or immediate post has no later chance, so it is refused now.
  const problems = findMediaProblems(post.platforms, post).filter((p) => !(draft && p.missing));
  if (problems.length === 0) return;
  const issues = problems.map((p) => ({ field: mediaProblemField(p, style), message: p.message }));
  const first = issues[0]!;
  throw new AppError('media_not_supported', `${first.field}: ${first.message}`, {
    issues,
    fix: 'Change the media to what each listed network takes, or remove that network from the post.',
    details: { platforms: [...new Set(problems.map((p) => p.platform))] },
  });
}
