import twitter from 'twitter-text';

// Each network's own text limits, counted the way that network counts, written here rather than taken from
// @sps/core: the API measures texts before a publish with core's counting, and the simulator is the
// independent check that makes a test fail when that measuring regresses. Each simulator answers a refusal
// in its network's own error shape; what the networks' pages say, and what is modeled, is noted per limit.

const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
/** Node 20's segmenter costs the square of what it is given, so texts are segmented in windows. */
const SEGMENT_WINDOW = 1024;

export function codePoints(text: string): number {
  let n = 0;
  for (const _ of text) n += 1;
  return n;
}

export const utf8Bytes = (text: string): number => Buffer.byteLength(text, 'utf8');

/**
 * Grapheme clusters (Unicode's extended ones, as the networks' own libraries count them). A window's last
 * cluster may go on past the window, so the next window starts at it; a window holding one cluster only
 * grows until the cluster ends.
 */
export function graphemes(text: string): number {
  let count = 0;
  let at = 0;
  let width = SEGMENT_WINDOW;
  while (at < text.length) {
    const window = text.slice(at, at + width);
    const segments = Array.from(segmenter.segment(window));
    if (at + window.length >= text.length) return count + segments.length;
    const last = segments.at(-1);
    if (!last || last.index === 0) {
      width *= 2;
      continue;
    }
    count += segments.length - 1;
    at += last.index;
    width = SEGMENT_WINDOW;
  }
  return count;
}

/**
 * X: twitter-text's weighted length — links 23, CJK and emoji 2 — at most 280 without X Premium
 * (https://docs.x.com/fundamentals/counting-characters). No 280-weighted text is longer than X_PARSE_MAX
 * UTF-16 units (at most 11 links of 4,096 characters each fit), so a longer one is refused unparsed:
 * twitter-text's link search costs the square of a stretch without spaces.
 */
export const X_TEXT_MAX = 280;
const X_PARSE_MAX = 50_000;

export function xTextLength(text: string): number {
  if (text.length > X_PARSE_MAX) return text.length;
  return twitter.parseTweet(text).weightedLength;
}

/**
 * Threads: "Text posts are limited to 500 characters. Emojis are counted as the number of UTF-8 bytes."
 * (https://developers.facebook.com/documentation/threads/posts). A character is taken as a code point, an
 * emoji as a whole grapheme cluster (a flag or a ZWJ family is one emoji of many bytes).
 */
export const THREADS_TEXT_MAX = 500;
const EMOJI = /\p{Extended_Pictographic}|\p{Regional_Indicator}/u;

export function threadsTextLength(text: string): number {
  // Every code point counts at least one, so a longer text is over without segmenting it.
  const points = codePoints(text);
  if (points > THREADS_TEXT_MAX) return points;
  let length = 0;
  for (const { segment } of segmenter.segment(text)) {
    length += EMOJI.test(segment) ? utf8Bytes(segment) : codePoints(segment);
  }
  return length;
}

/**
 * Mastodon's StatusLengthValidator (https://github.com/mastodon/mastodon/blob/main/app/validators/status_length_validator.rb):
 * links with a scheme count 23 (`extract_urls_with_indices(str, extract_url_without_protocol: false)`), a
 * mention `@user@domain` counts as `@user` (Account::MENTION_RE), then grapheme clusters are counted. Texts
 * longer than MASTODON_PARSE_MAX UTF-16 units are refused unparsed (no status within an instance's limit
 * is that long).
 */
const MASTODON_LINK = 'x'.repeat(23);
const MASTODON_MENTION =
  /(?<![=/\p{L}\p{M}\p{N}_])@([a-z0-9_]+(?:[.-]+[a-z0-9_]+)*)(?:@[\p{L}\p{M}\p{N}_.-]+[\p{L}\p{M}\p{N}_])?/giu;
const MASTODON_PARSE_MAX = 100_000;

export function mastodonTextLength(text: string): number {
  if (text.length > MASTODON_PARSE_MAX) return text.length;
  const local = (stretch: string) => stretch.replace(MASTODON_MENTION, (_m, user: string) => `@${user}`);
  let countable = '';
  let cursor = 0;
  for (const { indices } of twitter.extractUrlsWithIndices(text, { extractUrlsWithoutProtocol: false })) {
    countable += local(text.slice(cursor, indices[0])) + MASTODON_LINK;
    cursor = indices[1];
  }
  return graphemes(countable + local(text.slice(cursor)));
}

/**
 * Bluesky's `app.bsky.feed.post` lexicon: `text` has `maxLength` 3000 (UTF-8 bytes) and `maxGraphemes` 300
 * (https://github.com/bluesky-social/atproto/blob/main/lexicons/app/bsky/feed/post.json). The reference
 * validator (@atproto/lexicon, validators/primitives) checks the bytes first and words them as "characters".
 */
export const BLUESKY_TEXT_MAX_BYTES = 3000;
export const BLUESKY_TEXT_MAX_GRAPHEMES = 300;

export function blueskyTextProblem(text: string): string | null {
  if (utf8Bytes(text) > BLUESKY_TEXT_MAX_BYTES)
    return `Record/text must not be longer than ${BLUESKY_TEXT_MAX_BYTES} characters`;
  if (graphemes(text) > BLUESKY_TEXT_MAX_GRAPHEMES)
    return `Record/text must not be longer than ${BLUESKY_TEXT_MAX_GRAPHEMES} graphemes`;
  return null;
}

/**
 * Instagram: a caption of at most 2,200 characters, 30 hashtags and 20 @ tags (the `caption` parameter of
 * https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-user/media). No
 * page gives the unit, so UTF-16 code units are counted; hashtags and mentions are found with twitter-text's
 * extractors (Instagram's own rules for what makes a tag are not published).
 */
export const INSTAGRAM_CAPTION_MAX = 2200;
export const INSTAGRAM_HASHTAGS_MAX = 30;
export const INSTAGRAM_MENTIONS_MAX = 20;

export function instagramCaptionProblem(caption: string): string | null {
  if (caption.length > INSTAGRAM_CAPTION_MAX)
    return `The caption is ${caption.length} characters; at most ${INSTAGRAM_CAPTION_MAX} are allowed.`;
  const hashtags = twitter.extractHashtags(caption).length;
  if (hashtags > INSTAGRAM_HASHTAGS_MAX)
    return `The caption has ${hashtags} hashtags; at most ${INSTAGRAM_HASHTAGS_MAX} are allowed.`;
  const mentions = twitter.extractMentions(caption).length;
  if (mentions > INSTAGRAM_MENTIONS_MAX)
    return `The caption has ${mentions} @ tags; at most ${INSTAGRAM_MENTIONS_MAX} are allowed.`;
  return null;
}

/**
 * Facebook Page posts: 63,206 characters. No Meta page in reach states it (publishing tools quote it, e.g.
 * https://docs.upload-post.com/resources/character-limits), nor its unit: UTF-16 code units are counted.
 * Comments have no limit here, as no page gives one.
 */
export const FACEBOOK_TEXT_MAX = 63_206;

/**
 * LinkedIn: 3,000 characters of a post's `commentary` and 1,250 of a comment's `message.text`. LinkedIn's
 * Posts and Comments API references do not state either; both come from publishing tools' pages
 * (https://docs.postsyncer.com/platforms/linkedin, the comment tool schema at
 * https://glama.ai/mcp/connectors/com.publora/mcp-server/tools/linkedin_create_comment). UTF-16 code units
 * are counted (Rest.li is Java, whose strings count those), and `commentary` is counted as it is shown, its
 * Little Text backslash escapes taken out: no page says whether LinkedIn counts the escapes.
 */
export const LINKEDIN_COMMENTARY_MAX = 3000;
export const LINKEDIN_COMMENT_MAX = 1250;

export const linkedInShownLength = (commentary: string): number =>
  commentary.replace(/\\([\s\S])/g, '$1').length;
