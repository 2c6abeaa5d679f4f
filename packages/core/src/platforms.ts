import type { TTextUnit } from './text-units.js';

export const PLATFORMS = [
  'twitter',
  'threads',
  'bluesky',
  'linkedin',
  'mastodon',
  'instagram',
  'facebook',
  'tiktok',
  'youtube',
  'discord',
  'slack',
  'telegram',
] as const;
export type TPlatform = (typeof PLATFORMS)[number];

/** Variant A accepts exactly these five identifiers. */
export const VARIANT_A_PLATFORMS = ['twitter', 'threads', 'bluesky', 'linkedin', 'mastodon'] as const;
export type TVariantAPlatform = (typeof VARIANT_A_PLATFORMS)[number];

export function isPlatform(value: string): value is TPlatform {
  return (PLATFORMS as readonly string[]).includes(value);
}

/** How a network delivers thread replies (spec, Variant B rule 6). */
export type TThreadGroup = 'reply_chain' | 'comment' | 'native_message' | 'sequential_counter';

export const THREAD_GROUP: Record<TPlatform, TThreadGroup> = {
  twitter: 'reply_chain',
  bluesky: 'reply_chain',
  mastodon: 'reply_chain',
  threads: 'reply_chain',
  facebook: 'comment',
  instagram: 'comment',
  linkedin: 'comment',
  youtube: 'comment',
  slack: 'native_message',
  discord: 'native_message',
  telegram: 'native_message',
  tiktok: 'sequential_counter',
};

/**
 * How each network counts text (see text-length.ts): `twitter` is twitter-text's weighted length (links
 * 23, CJK and emoji 2); `mastodon` graphemes with links 23 and remote mentions without their domain;
 * `bluesky` graphemes plus a 3,000-byte cap; `threads` characters with emoji as their UTF-8 bytes;
 * `youtube` the description's UTF-8 bytes; `utf16` UTF-16 code units, where a network counts those or does
 * not say (never fewer than code points, so a text that passes fits either way).
 */
export type TLengthRule = 'twitter' | 'mastodon' | 'bluesky' | 'threads' | 'youtube' | 'utf16';

export interface TNetworkTextLimit {
  max: number;
  rule: TLengthRule;
  unit: TTextUnit;
}

/**
 * Each network's text limit and how it counts, from its documentation:
 * - twitter: 280, weighted by twitter-text — https://docs.x.com/fundamentals/counting-characters
 * - bluesky: 300 graphemes and 3,000 UTF-8 bytes (`maxGraphemes`/`maxLength` of `text`) —
 *   https://github.com/bluesky-social/atproto/blob/main/lexicons/app/bsky/feed/post.json
 * - mastodon: 500 grapheme clusters, every link 23, `@user@domain` counts `@user` (instances may raise the
 *   500) — https://github.com/mastodon/mastodon/blob/main/app/validators/status_length_validator.rb
 * - threads: "Text posts are limited to 500 characters. Emojis are counted as the number of UTF-8 bytes." —
 *   https://developers.facebook.com/documentation/threads/posts
 * - youtube: the description "has a maximum length of 5000 bytes" (UTF-8; `<` and `>` are not allowed, the
 *   connector sends ‹ and ›); the title (100 characters) is cut from the first line by the connector —
 *   https://developers.google.com/youtube/v3/docs/videos#snippet.description
 * - tiktok: a video's caption (`post_info.title`) is at most 2,200 UTF-16 runes (a photo post's
 *   description allows 4,000; 2,200 holds for both) —
 *   https://developers.tiktok.com/doc/content-posting-api-reference-direct-post
 * - linkedin: 3,000 characters of `commentary` (found only on publishing tools' pages, e.g.
 *   https://docs.postsyncer.com/platforms/linkedin; LinkedIn's Posts API reference does not state it)
 * - facebook: 63,206 characters (likewise secondary: https://docs.upload-post.com/resources/character-limits)
 * - instagram: captions of at most 2,200 characters (same page; the Graph API adds 30 hashtags, 20 @-tags)
 * - discord: `content` "up to 2000 characters" — https://discord.com/developers/docs/resources/message#create-message
 * - slack: `text` beyond 40,000 characters is truncated — https://api.slack.com/methods/chat.postMessage
 * - telegram: "1-4096 characters after entities parsing" — https://core.telegram.org/bots/api#sendmessage
 * Where a page gives no unit (LinkedIn, Facebook, Instagram, Discord, Slack, Telegram) UTF-16 code units
 * are counted, the unit most of these APIs use for offsets and never fewer than code points.
 */
export const NETWORK_TEXT_LIMITS: Record<TPlatform, TNetworkTextLimit> = {
  twitter: { max: 280, rule: 'twitter', unit: 'weighted characters' },
  bluesky: { max: 300, rule: 'bluesky', unit: 'graphemes' },
  mastodon: { max: 500, rule: 'mastodon', unit: 'graphemes' },
  threads: { max: 500, rule: 'threads', unit: 'characters' },
  linkedin: { max: 3000, rule: 'utf16', unit: 'UTF-16 code units' },
  facebook: { max: 63206, rule: 'utf16', unit: 'UTF-16 code units' },
  instagram: { max: 2200, rule: 'utf16', unit: 'UTF-16 code units' },
  tiktok: { max: 2200, rule: 'utf16', unit: 'UTF-16 code units' },
  youtube: { max: 5000, rule: 'youtube', unit: 'UTF-8 bytes' },
  discord: { max: 2000, rule: 'utf16', unit: 'UTF-16 code units' },
  slack: { max: 40000, rule: 'utf16', unit: 'UTF-16 code units' },
  telegram: { max: 4096, rule: 'utf16', unit: 'UTF-16 code units' },
};

/** Networks whose API can delete a published post (Instagram and TikTok cannot). */
export const DELETE_SUPPORTED: ReadonlySet<TPlatform> = new Set(
  PLATFORMS.filter((p) => p !== 'instagram' && p !== 'tiktok'),
);

/**
 * Variant A network availability (spec: twitter live, threads after the network owner's approval,
 * bluesky/linkedin/mastodon in testing). Operators change it with NETWORK_AVAILABILITY.
 */
export type TAvailability = 'live' | 'testing' | 'pending_approval' | 'disabled';
export const DEFAULT_AVAILABILITY_A =
  'twitter=live,threads=pending_approval,bluesky=testing,linkedin=testing,mastodon=testing';

export function parseAvailability(spec: string): Partial<Record<TPlatform, TAvailability>> {
  const out: Partial<Record<TPlatform, TAvailability>> = {};
  for (const part of spec
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [name, state] = part.split('=').map((s) => s.trim());
    if (
      !name ||
      !isPlatform(name) ||
      !state ||
      !['live', 'testing', 'pending_approval', 'disabled'].includes(state)
    ) {
      throw new Error(`"${part}" is not platform=live|testing|pending_approval|disabled`);
    }
    out[name] = state as TAvailability;
  }
  return out;
}
