import { mastodonLength, parseBudget, type TParseBudget, twitterWeight } from './link-weight.js';
import { NETWORK_TEXT_LIMITS, type TPlatform } from './platforms.js';
import {
  codePointCount,
  graphemeCount,
  type TMeasure,
  type TTextUnit,
  utf8Length,
  utf16Length,
} from './text-units.js';
import { planThreadDelivery } from './thread-plan.js';

export { parseBudget, type TParseBudget } from './link-weight.js';

/** Bluesky's record also caps the text at 3,000 UTF-8 bytes (app.bsky.feed.post, `maxLength`). */
const BLUESKY_MAX_BYTES = 3000;

const EMOJI = /\p{Extended_Pictographic}|\p{Regional_Indicator}/u;

/** Threads: characters, but an emoji counts as many as its UTF-8 bytes. */
function threadsLength(text: string, max: number): TMeasure {
  // Every code point counts at least 1 and at most its UTF-8 bytes: most texts are decided without segmenting.
  const points = codePointCount(text);
  if (points > max) return { length: points, exact: false };
  let length = 0;
  for (const { segment } of new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(text)) {
    length += EMOJI.test(segment) ? utf8Length(segment) : codePointCount(segment);
  }
  return { length, exact: true };
}

/** YouTube counts the description's UTF-8 bytes; the connector sends `<` and `>` as ‹ and › (3 bytes each). */
function youtubeLength(text: string): number {
  let angles = 0;
  for (let i = text.indexOf('<'); i !== -1; i = text.indexOf('<', i + 1)) angles += 1;
  for (let i = text.indexOf('>'); i !== -1; i = text.indexOf('>', i + 1)) angles += 1;
  return utf8Length(text) + 2 * angles;
}

export interface TTextMeasure extends TMeasure {
  /** The limit this length is held against (Bluesky has two). */
  max: number;
  unit: TTextUnit;
}

/**
 * A text's length as `platform` counts it, with bounded work: counting may stop once the length is past
 * the limit (`exact: false`, then `length` is only known to be over `max`). `budget` bounds link parsing
 * over all texts of one check.
 */
export function measureFor(
  platform: TPlatform,
  text: string,
  budget: TParseBudget = parseBudget(),
): TTextMeasure {
  const { max, rule, unit } = NETWORK_TEXT_LIMITS[platform];
  const of = (m: TMeasure, limit = max, as: TTextUnit = unit): TTextMeasure => ({
    ...m,
    max: limit,
    unit: as,
  });
  switch (rule) {
    case 'twitter':
      return of(twitterWeight(text, max, budget));
    case 'mastodon':
      return of(mastodonLength(text, max, budget));
    case 'bluesky': {
      const bytes = utf8Length(text);
      if (bytes > BLUESKY_MAX_BYTES)
        return of({ length: bytes, exact: true }, BLUESKY_MAX_BYTES, 'UTF-8 bytes');
      return of(graphemeCount(text, max));
    }
    case 'threads':
      return of(threadsLength(text, max));
    case 'youtube':
      return of({ length: youtubeLength(text), exact: true });
    case 'utf16':
      return of({ length: utf16Length(text), exact: true });
  }
}

/**
 * Mastodon's count (links 23, remote mentions by their local part) against an instance's own limit, which
 * may differ from the default in NETWORK_TEXT_LIMITS; bounded like every other measure.
 */
export function mastodonTextLength(text: string, max: number): TMeasure {
  return mastodonLength(text, max, parseBudget());
}

/** The length shown next to a network's limit (the dashboard's live count). */
export function textLength(platform: TPlatform, text: string): number {
  return measureFor(platform, text).length;
}

export interface TTextViolation {
  platform: TPlatform;
  /** 0 = main post, 1.. = thread segments. */
  segmentIndex: number;
  length: number;
  /** False when counting stopped past the limit: the text is longer than `length`… or at least over `max`. */
  exact: boolean;
  max: number;
  unit: TTextUnit;
}

/** `is 300 graphemes for bluesky, over its limit of 300` style wording shared by both variants. */
export function describeViolation(v: TTextViolation): string {
  const amount = v.exact ? `is ${v.length} ${v.unit}` : `is more than ${v.max} ${v.unit}`;
  return `${amount} for ${v.platform}, over its limit of ${v.max}`;
}

/**
 * Checks every text against every target network. Measures the planned delivery text rather than
 * the raw input, because numbered fallbacks append ` (X/Y)` and that can tip a text over the limit.
 * Ordered by platform (as given), then segment. One parse budget covers the whole check.
 */
export function findTextViolations(
  platforms: readonly TPlatform[],
  texts: readonly string[],
  budget: TParseBudget = parseBudget(),
): TTextViolation[] {
  const violations: TTextViolation[] = [];
  for (const platform of new Set(platforms)) {
    for (const item of planThreadDelivery(platform, texts)) {
      const m = measureFor(platform, item.text, budget);
      if (m.length > m.max) violations.push({ platform, segmentIndex: item.segmentIndex, ...m });
    }
  }
  return violations;
}
