import twitter from 'twitter-text';
import { NETWORK_TEXT_LIMITS, type TLengthRule, type TPlatform } from './platforms.js';
import { planThreadDelivery } from './thread-plan.js';

/** Mastodon and X both weigh every link as a fixed-length t.co-style URL. */
const URL_WEIGHT = 23;

/**
 * Mastodon's Account::MENTION_RE, translated: only the `@user` part of `@user@domain` counts
 * because the server strips the domain before measuring.
 */
const MASTODON_REMOTE_MENTION =
  /(?<![=/\p{L}\p{N}_])(@[a-z0-9_]+(?:[.-]+[a-z0-9_]+)*)@[\p{L}\p{N}_]+(?:[.-]+[\p{L}\p{N}_]+)*/giu;

let graphemeSegmenter: Intl.Segmenter | undefined;

function countGraphemes(text: string): number {
  graphemeSegmenter ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  let count = 0;
  for (const _ of graphemeSegmenter.segment(text)) count++;
  return count;
}

function countCodePoints(text: string): number {
  return [...text].length;
}

function countMastodon(text: string): number {
  // Mastodon only rewrites links that carry a scheme; bare domains count as plain text.
  const urls = twitter.extractUrlsWithIndices(text, { extractUrlsWithoutProtocol: false });
  let length = 0;
  let cursor = 0;
  const countPlain = (plain: string): number =>
    countCodePoints(plain.replace(MASTODON_REMOTE_MENTION, (_match, local: string) => local));
  for (const { indices } of urls) {
    const [start, end] = indices;
    length += countPlain(text.slice(cursor, start)) + URL_WEIGHT;
    cursor = end;
  }
  return length + countPlain(text.slice(cursor));
}

export function measureText(text: string, rule: TLengthRule): number {
  switch (rule) {
    case 'twitter':
      return twitter.parseTweet(text).weightedLength;
    case 'graphemes':
      return countGraphemes(text);
    case 'mastodon':
      return countMastodon(text);
    case 'chars':
      return countCodePoints(text);
  }
}

export function textLength(platform: TPlatform, text: string): number {
  return measureText(text, NETWORK_TEXT_LIMITS[platform].rule);
}

export interface TTextViolation {
  platform: TPlatform;
  /** 0 = main post, 1.. = thread segments. */
  segmentIndex: number;
  length: number;
  max: number;
}

/**
 * Checks every text against every target network. Measures the planned delivery text rather than
 * the raw input, because numbered fallbacks append ` (X/Y)` and that can tip a text over the limit.
 * Ordered by platform (as given), then segment.
 */
export function findTextViolations(
  platforms: readonly TPlatform[],
  texts: readonly string[],
): TTextViolation[] {
  const violations: TTextViolation[] = [];
  for (const platform of new Set(platforms)) {
    const { max } = NETWORK_TEXT_LIMITS[platform];
    for (const item of planThreadDelivery(platform, texts)) {
      const length = textLength(platform, item.text);
      if (length > max) violations.push({ platform, segmentIndex: item.segmentIndex, length, max });
    }
  }
  return violations;
}
