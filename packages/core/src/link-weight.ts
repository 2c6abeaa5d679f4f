import twitter from 'twitter-text';
import { codePointCount, graphemeCount, type TMeasure } from './text-units.js';

// X and Mastodon count every link as 23 characters, and finding links needs twitter-text's URL
// expression, whose cost grows with the square of a stretch without spaces: 3-5 s of blocking CPU on a
// 63,206-character "a.a.a.…" text, and 0.7 s on 8,192 characters of "日.日.…". So the parser only ever
// sees bounded pieces:
//
// - The text is cut at ASCII whitespace. No link, emoji or domain ever contains one, and a space ends a
//   top-level domain like the text's end does. Before a link, twitter-text takes one character that is not a
//   letter or digit, which a space is but the text's start is not (at the start it takes the next character
//   instead): so a stretch that followed whitespace is parsed behind one space, whose weight (1) is taken
//   off again. Then the weights of the pieces add up to the weight of the whole
//   (link-weight.test.ts compares both on generated texts).
// - A piece that cannot hold a link (X: no "." followed by a top-level domain; Mastodon: no "http://" or
//   "https://") is weighed in linear time: for X its dots become commas (same weight), and twitter-text's
//   link search returns at once when a text has no dot.
// - A stretch that can hold a link is parsed when it has at most RUN_PARSE_MAX UTF-16 units and the
//   check's parse budget (paid in length²) allows it. A stretch the parser may not see counts an upper bound, every character at its full weight plus 23 per possible link: more than the
//   network counts, so such a post is refused rather than sent to be refused. In practice that is a link
//   longer than 2,048 characters (twitter-text links up to 4,096; browsers and sitemaps stop at about 2,000).
// - Counting stops as soon as the total passes the limit.

/** The most UTF-16 units the link parser is ever given at once (its cost grows with their square). */
export const RUN_PARSE_MAX = 2048;
/**
 * What one check (a request's texts, a due post) may spend on link parsing, in (UTF-16 units)² of the
 * stretches parsed: four stretches of RUN_PARSE_MAX, about 0.2 s of CPU on the most expensive text found
 * (against seconds to minutes unbounded), or a thread whose texts hold ten links of 1,000 characters.
 */
export const PARSE_BUDGET = 4 * RUN_PARSE_MAX * RUN_PARSE_MAX;
/** What every link counts on X and Mastodon. */
export const LINK_WEIGHT = 23;

/** Parse work left for one check (one request, one due post); shared by every text and network in it. */
export interface TParseBudget {
  remaining: number;
}

export function parseBudget(units = PARSE_BUDGET): TParseBudget {
  return { remaining: units };
}

/** The parser calls, so tests can prove what it was given (see link-weight.test.ts). */
export const linkParser = {
  parseTweet: (text: string): number => twitter.parseTweet(text).weightedLength,
  extractUrls: (text: string): { indices: [number, number] }[] =>
    twitter.extractUrlsWithIndices(text, { extractUrlsWithoutProtocol: false }),
};

const WHITESPACE = /[\t\n\v\f\r ]+/g;

interface TPiece {
  text: string;
  space: boolean;
  /** A run that followed whitespace (not the text's first). */
  afterSpace: boolean;
}

/** Alternating stretches: [run, space, run, space, …]; a run may be empty. */
function* pieces(text: string): Generator<TPiece> {
  let cursor = 0;
  for (const match of text.matchAll(WHITESPACE)) {
    yield { text: text.slice(cursor, match.index), space: false, afterSpace: cursor > 0 };
    yield { text: match[0], space: true, afterSpace: false };
    cursor = match.index + match[0].length;
  }
  yield { text: text.slice(cursor), space: false, afterSpace: cursor > 0 };
}

/** The run as the parser saw it in the whole text: behind a space when whitespace preceded it. */
function inContext(piece: TPiece): { text: string; offset: number } {
  return piece.afterSpace ? { text: ` ${piece.text}`, offset: 1 } : { text: piece.text, offset: 0 };
}

/** Whether the parser may see this stretch (as it will be given, a leading space included); pays for it. */
function affordable(piece: TPiece, budget: TParseBudget): boolean {
  const length = inContext(piece).text.length;
  const cost = length * length;
  if (length > RUN_PARSE_MAX || cost > budget.remaining) return false;
  budget.remaining -= cost;
  return true;
}

const r = twitter.regexen;
/** Every link twitter-text finds has its domain end in one of these, so none can exist without one. */
const TLD_SOURCE = `\\.(?:${r.validGTLD.source}|${r.validCCTLD.source}|${r.validPunycode.source})`;
const TLD_AFTER_DOT = new RegExp(TLD_SOURCE, 'i');
const TLD_AFTER_DOT_ALL = new RegExp(TLD_SOURCE, 'gi');
const SCHEME = /https?:\/\//i;
const SCHEME_ALL = /https?:\/\//gi;

function count(pattern: RegExp, text: string): number {
  let n = 0;
  for (const _ of text.matchAll(pattern)) n += 1;
  return n;
}

/**
 * twitter-text never weighs a code point below 1, nor an emoji sequence (at most 11 code points, a family
 * with skin tones) below 2: a text without links weighs at least an eighth of its code points.
 */
function linkFreeFloor(text: string): number {
  return Math.ceil(codePointCount(text) / 8);
}

/** Weight of a text that cannot hold a link: dots become commas (same weight), so the link search returns at once. */
function linkFreeWeight(text: string): number {
  return linkParser.parseTweet(text.replaceAll('.', ','));
}

function twitterRun(piece: TPiece, budget: TParseBudget): TMeasure {
  const run = piece.text;
  const links = count(TLD_AFTER_DOT_ALL, run);
  if (affordable(piece, budget)) {
    const { text, offset } = inContext(piece);
    return { length: linkParser.parseTweet(text) - offset, exact: true };
  }
  // Every character weighs at most 2 and every link 23, whatever the parser would have found.
  return { length: 2 * run.length + LINK_WEIGHT * links, exact: false };
}

/**
 * X's weighted length (twitter-text: links 23, CJK and emoji 2, NFC), counted until it passes `max`.
 * Exact while the answer is at most `max` and no stretch had to be bounded.
 */
export function twitterWeight(text: string, max: number, budget: TParseBudget): TMeasure {
  const normalized = text.normalize('NFC');
  const over = (length: number): TMeasure => ({ length, exact: false });
  if (!TLD_AFTER_DOT.test(normalized)) {
    const floor = linkFreeFloor(normalized);
    return floor > max ? over(floor) : { length: linkFreeWeight(normalized), exact: true };
  }
  // Stretch by stretch: those without links are weighed together, each one that may hold a link alone.
  let length = 0;
  let exact = true;
  let linkFree = '';
  const flush = (): boolean => {
    if (linkFree === '') return length > max;
    const floor = linkFreeFloor(linkFree);
    length += length + floor > max ? floor : linkFreeWeight(linkFree);
    linkFree = '';
    return length > max;
  };
  for (const piece of pieces(normalized)) {
    if (piece.space || !TLD_AFTER_DOT.test(piece.text)) {
      linkFree += piece.text;
      continue;
    }
    if (flush()) return over(length);
    const run = twitterRun(piece, budget);
    length += run.length;
    exact &&= run.exact;
    if (length > max) return over(length);
  }
  if (flush()) return over(length);
  return { length, exact };
}

/**
 * Mastodon's StatusLengthValidator: only the `@user` part of `@user@domain` counts (Account::MENTION_RE,
 * translated), because the server strips the domain before measuring.
 */
const MASTODON_REMOTE_MENTION =
  /(?<![=/\p{L}\p{N}_])(@[a-z0-9_]+(?:[.-]+[a-z0-9_]+)*)@[\p{L}\p{N}_]+(?:[.-]+[\p{L}\p{N}_]+)*/giu;
const LINK_PLACEHOLDER = 'x'.repeat(LINK_WEIGHT);
/** How much countable text (UTF-16 units) is built between checks whether it is already over the limit. */
const STOP_CHECK_EVERY = 4096;

function withoutMentionDomains(plain: string): string {
  return plain.replace(MASTODON_REMOTE_MENTION, (_match, local: string) => local);
}

/** Links (with a scheme only, as Mastodon extracts them) become 23 characters, remote mentions `@user`. */
function mastodonCountable(piece: TPiece): string {
  const { text, offset } = inContext(piece);
  let countable = '';
  let cursor = offset;
  for (const { indices } of linkParser.extractUrls(text)) {
    countable += withoutMentionDomains(text.slice(cursor, indices[0])) + LINK_PLACEHOLDER;
    cursor = indices[1];
  }
  return countable + withoutMentionDomains(text.slice(cursor));
}

/**
 * Mastodon's length: graphemes of the text after links became 23 characters and remote mentions lost their
 * domain (status_length_validator.rb), counted until it passes `max`.
 */
export function mastodonLength(text: string, max: number, budget: TParseBudget): TMeasure {
  if (!SCHEME.test(text)) return graphemeCount(withoutMentionDomains(text), max);
  let countable = '';
  // What bounded stretches may add beyond their plain text: at most 23 per link (a short link grows).
  let extra = 0;
  let checkAt = STOP_CHECK_EVERY;
  for (const piece of pieces(text)) {
    const links = piece.space ? 0 : count(SCHEME_ALL, piece.text);
    if (links === 0) countable += piece.space ? piece.text : withoutMentionDomains(piece.text);
    else if (affordable(piece, budget)) countable += mastodonCountable(piece);
    else {
      countable += withoutMentionDomains(piece.text);
      extra += LINK_WEIGHT * links;
    }
    if (countable.length >= checkAt) {
      // A prefix never has more graphemes than the whole: once it is over, so is the text.
      const sofar = graphemeCount(countable, max - extra);
      if (!sofar.exact) return { length: sofar.length + extra, exact: false };
      checkAt = countable.length + STOP_CHECK_EVERY;
    }
  }
  const graphemes = graphemeCount(countable, max - extra);
  return { length: graphemes.length + extra, exact: graphemes.exact && extra === 0 };
}
