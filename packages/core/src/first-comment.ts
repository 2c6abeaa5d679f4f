import { z } from 'zod';
import { validationError } from './app-error.js';
import type { TPlatform } from './platforms.js';
import type { TFirstCommentRecord } from './post-model.js';
import { ZText } from './text-fields.js';
import { measureFor } from './text-length.js';
import { utf16Length } from './text-units.js';

/**
 * A post's first comment (`first_comment` / `firstComment`) is posted after the post and its thread are
 * out. It is recorded like a segment (write-ahead row, read-back after a lost answer) under this segment
 * index, above any thread segment (at most 25 texts), so replies-first orders (delete) take it first.
 */
export const FIRST_COMMENT_SEGMENT = 1000;

/** The field's own bound (the longest any network takes, YouTube's); each network's limit is checked apart. */
export const ZFirstComment = ZText(1, 10_000);

/** How each network takes a first comment: a comment under the post, or a reply to the thread's last post. */
export const FIRST_COMMENT_STYLE: Readonly<Partial<Record<TPlatform, 'comment' | 'reply'>>> = {
  linkedin: 'comment',
  facebook: 'comment',
  instagram: 'comment',
  youtube: 'comment',
  twitter: 'reply',
  threads: 'reply',
  bluesky: 'reply',
  mastodon: 'reply',
};

export function takesFirstComment(platform: TPlatform): boolean {
  return FIRST_COMMENT_STYLE[platform] !== undefined;
}

/**
 * Comment limits where a comment is not a post (a reply is a post: it meets the network's post limit):
 * - LinkedIn Comments API: a comment's `message.text` takes up to 1,250 characters
 *   (https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/comments-api);
 * - Facebook comments up to 8,000 characters, Instagram comments up to 2,200 (as its captions), YouTube
 *   comments up to 10,000 (https://developers.google.com/youtube/v3/docs/commentThreads/insert takes
 *   `snippet.topLevelComment.snippet.textOriginal`; the per-network maxima as listed by
 *   https://marketplace.gohighlevel.com/docs/ghl/social-planner/comments).
 * Counted in UTF-16 code units, never fewer than the characters the networks count.
 */
export const COMMENT_TEXT_LIMITS: Readonly<Partial<Record<TPlatform, number>>> = {
  linkedin: 1250,
  facebook: 8000,
  instagram: 2200,
  youtube: 10_000,
};

/** Why `text` cannot be `platform`'s first comment, or null. */
export function firstCommentProblem(platform: TPlatform, text: string): string | null {
  const style = FIRST_COMMENT_STYLE[platform];
  if (!style) return `${platform} has no comments or replies; remove the first comment or the network`;
  const commentMax = COMMENT_TEXT_LIMITS[platform];
  if (commentMax !== undefined) {
    const length = utf16Length(text);
    return length > commentMax
      ? `is ${length} characters for a ${platform} comment, over its limit of ${commentMax}`
      : null;
  }
  const m = measureFor(platform, text);
  if (m.length <= m.max) return null;
  const amount = m.exact ? `is ${m.length} ${m.unit}` : `is more than ${m.max} ${m.unit}`;
  return `${amount} for a ${platform} reply, over its limit of ${m.max}`;
}

/**
 * Create/update check (both variants, 400 `validation_error` naming the field): a first comment is refused
 * for a network without comments or replies (TikTok, Discord, Slack, Telegram) and over a network's limit.
 */
export function assertFirstCommentFits(
  platforms: readonly TPlatform[],
  text: string | null | undefined,
  field: string,
): void {
  if (text === null || text === undefined) return;
  const issues = [...new Set(platforms)].flatMap((platform) => {
    const problem = firstCommentProblem(platform, text);
    return problem ? [{ field, message: problem }] : [];
  });
  if (issues.length > 0) {
    throw validationError(
      issues,
      'Shorten the first comment, or remove it or the networks without comments (tiktok, discord, slack, telegram).',
    );
  }
}

/** A settled first comment on a network: its id and link, or why it is not there (null while none settled). */
export function settledFirstComment(
  record: TFirstCommentRecord | null | undefined,
): { ok: true; id: string; url: string } | { ok: false; error: string } | null {
  if (!record) return null;
  if (record.status === 'sent' && record.remoteId)
    return { ok: true, id: record.remoteId, url: record.remoteUrl ?? '' };
  if (record.status === 'failed' || record.status === 'unknown')
    return { ok: false, error: record.error ?? 'The first comment could not be posted.' };
  return null;
}

export const ZFirstCommentResultB = z
  .union([
    z.object({ success: z.literal(true), post_id: z.string(), post_url: z.string() }),
    z.object({ success: z.literal(false), error: z.string() }),
  ])
  .meta({ description: "The first comment's outcome on this network (present once settled)." });

export function firstCommentResultB(
  record: TFirstCommentRecord | null | undefined,
): z.output<typeof ZFirstCommentResultB> | null {
  const settled = settledFirstComment(record);
  if (!settled) return null;
  return settled.ok
    ? { success: true, post_id: settled.id, post_url: settled.url }
    : { success: false, error: settled.error };
}

export const ZFirstCommentResultA = z
  .union([z.object({ id: z.string(), url: z.string() }), z.object({ error: z.string() })])
  .meta({ description: "The first comment's outcome on this network (present once settled)." });

export function firstCommentResultA(
  record: TFirstCommentRecord | null | undefined,
): z.output<typeof ZFirstCommentResultA> | null {
  const settled = settledFirstComment(record);
  if (!settled) return null;
  return settled.ok ? { id: settled.id, url: settled.url } : { error: settled.error };
}
