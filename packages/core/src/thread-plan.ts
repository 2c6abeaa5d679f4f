import { NETWORK_TEXT_LIMITS, THREAD_GROUP, type TPlatform } from './platforms.js';

export interface TPlannedItem {
  /** 0 = main post, 1.. = thread segments. */
  segmentIndex: number;
  /** The text exactly as it is sent to the network. */
  text: string;
  /** Segment this item replies to; null for the main post and for separate posts. */
  replyToSegment: number | null;
  /** Root of the reply chain (some networks, e.g. Bluesky, need it on every reply). */
  rootSegment: number | null;
}

/** Suffix appended to each post of a sequentially numbered thread, e.g. ` (2/3)`. */
export function counterSuffix(index: number, total: number): string {
  return ` (${index + 1}/${total})`;
}

/** Whether the network receives a multi-text post as separate numbered posts instead of replies. */
export function usesCounterSuffix(platform: TPlatform, textCount: number): boolean {
  return textCount > 1 && THREAD_GROUP[platform] !== 'reply_chain';
}

/**
 * How one network receives a post and its segments. Comment and native-message networks currently
 * fall back to sequential numbered posts (spec, Variant B rule 6), same as TikTok.
 */
export function planThreadDelivery(platform: TPlatform, texts: readonly string[]): TPlannedItem[] {
  const total = texts.length;
  if (usesCounterSuffix(platform, total)) {
    return texts.map((text, i) => ({
      segmentIndex: i,
      text: text + counterSuffix(i, total),
      replyToSegment: null,
      rootSegment: null,
    }));
  }
  return texts.map((text, i) => ({
    segmentIndex: i,
    text,
    replyToSegment: i === 0 ? null : i - 1,
    rootSegment: i === 0 ? null : 0,
  }));
}

/**
 * The thread length limit follows the tightest native-threading network among the post's targets
 * (spec, Variant B rule 5); networks without native threads do not constrain it.
 */
export function threadTextLimit(
  platforms: readonly TPlatform[],
): { platform: TPlatform; max: number } | null {
  let tightest: { platform: TPlatform; max: number } | null = null;
  for (const platform of platforms) {
    if (THREAD_GROUP[platform] !== 'reply_chain') continue;
    const { max } = NETWORK_TEXT_LIMITS[platform];
    if (tightest === null || max < tightest.max) tightest = { platform, max };
  }
  return tightest;
}
