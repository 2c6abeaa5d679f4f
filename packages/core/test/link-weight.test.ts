import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import twitter from 'twitter-text';
import {
  LINK_WEIGHT,
  linkParser,
  mastodonLength,
  PARSE_BUDGET,
  parseBudget,
  RUN_PARSE_MAX,
  twitterWeight,
} from '../src/link-weight.js';
import { findPublishProblems } from '../src/publish-checks.js';
import { findTextViolations } from '../src/text-length.js';

/** What the parser was given: every call's length, so a test can prove the bound. */
let calls: { fn: string; length: number; text: string }[] = [];
const original = { ...linkParser };

beforeEach(() => {
  calls = [];
  linkParser.parseTweet = (text) => {
    calls.push({ fn: 'parseTweet', length: text.length, text });
    return original.parseTweet(text);
  };
  linkParser.extractUrls = (text) => {
    calls.push({ fn: 'extractUrls', length: text.length, text });
    return original.extractUrls(text);
  };
});

afterEach(() => {
  Object.assign(linkParser, original);
});

/** Calls that could search for links: every parseTweet of a text with a dot, and every URL extraction. */
function linkSearches() {
  return calls.filter((c) => c.fn === 'extractUrls' || c.text.includes('.'));
}

const repeat = (unit: string, units: number) => unit.repeat(Math.ceil(units / unit.length)).slice(0, units);

describe('the link parser only sees bounded stretches', () => {
  const hostile = [
    repeat('a.', 63206), // the text: 3-5 s in parseTweet
    repeat('日.', 63206), // CJK domains: 0.7 s per 8,192 characters
    `${repeat('日.', 63190)}!a.com`, // a real link at the end, so the text can hold one
    repeat('a.com', 63205),
    repeat('😀.', 63206),
    `http://${repeat('a.', 63199)}`, // Mastodon's search, which needs a scheme
    repeat('https://x.co/ 日.日.日.', 63206), // many short links: the budget runs out
  ];

  it.each(hostile.map((text, i) => [i, text]))(
    'hostile text %i: every network refuses it, and no link search sees more than RUN_PARSE_MAX units or the budget',
    (_i, text) => {
      const post = {
        content: text as string,
        platforms: ['twitter', 'mastodon', 'bluesky', 'threads'] as const,
        media: null,
        // The most one request can ask for: 24 replies of 5,000 characters each.
        segments: Array.from({ length: 24 }, () => ({
          content: (text as string).slice(0, 5000),
          media: null,
        })),
      };
      const problems = findPublishProblems(
        { ...post, platforms: [...post.platforms] },
        new Set(post.platforms),
      );
      expect(problems.tooLong.filter((p) => p.field === 'content').map((p) => p.platform)).toEqual([
        'twitter',
        'mastodon',
        'bluesky',
        'threads',
      ]);
      const searches = linkSearches();
      expect(Math.max(0, ...searches.map((c) => c.length))).toBeLessThanOrEqual(RUN_PARSE_MAX);
      // One check shares one budget, whatever the number of texts and networks.
      expect(searches.reduce((sum, c) => sum + c.length * c.length, 0)).toBeLessThanOrEqual(PARSE_BUDGET);
    },
  );

  it('without the bound the same check would hand the parser the whole 63,206 characters', () => {
    // The control: the spy sees what the unbounded code would have parsed.
    original.parseTweet(repeat('a.', 2000));
    expect(calls).toEqual([]);
    twitterWeight(repeat('a.', 63206), 280, parseBudget());
    expect(Math.max(...calls.map((c) => c.length))).toBeLessThanOrEqual(8 * 280);
  });

  it('a link longer than RUN_PARSE_MAX is counted in full, so the post is refused rather than parsed', () => {
    const long = `see https://example.com/${'p'.repeat(RUN_PARSE_MAX)}`;
    expect(twitter.parseTweet(long).weightedLength).toBe(4 + LINK_WEIGHT);
    const measured = twitterWeight(long, 280, parseBudget());
    expect(measured.exact).toBe(false);
    expect(measured.length).toBeGreaterThan(280);
    expect(findTextViolations(['twitter'], [long])).toHaveLength(1);
  });

  it('once the budget is spent, later links are bounded from above, never below', () => {
    const budget = parseBudget(0);
    const text = 'a.co '.repeat(3);
    const measured = twitterWeight(text, 280, budget);
    expect(measured.exact).toBe(false);
    expect(measured.length).toBeGreaterThanOrEqual(twitter.parseTweet(text).weightedLength);
  });
});

/** A small deterministic generator, so a failure names a reproducible text. */
function random(seed: number) {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

const PARTS = [
  'word',
  ' ',
  '  ',
  '\n',
  '\t',
  '.',
  '..',
  'example.com',
  'https://example.com/path?q=1',
  'http://x.co',
  'a.co',
  'www.test.org/x.y',
  '日本語',
  '日.',
  '😀',
  '👨‍👩‍👧‍👦',
  '🇩🇪',
  'é',
  'e\u0301',
  '@alice@mastodon.social',
  '@bob',
  '#tag',
  'xn--bcher-kva.example',
  '(https://wikipedia.org/wiki/A_(b))',
  ',',
  'https://t.co/abc',
  'Mr.Smith',
  '😀.com',
  'éx.com',
  '\u00a0',
  '\u3000',
  '\r\n',
  '$',
  '@',
  '#',
  '-',
  '_',
  '/',
  ':',
  'https://',
  '０',
  '\u0301',
  '\u200d',
];

function randomText(next: () => number, parts: number): string {
  let text = '';
  for (let i = 0; i < parts; i += 1) text += PARTS[Math.floor(next() * PARTS.length)];
  return text;
}

/** Mastodon as the unbounded code counted it: links of the whole text, then graphemes. */
function mastodonReference(text: string): number {
  const mention =
    /(?<![=/\p{L}\p{N}_])(@[a-z0-9_]+(?:[.-]+[a-z0-9_]+)*)@[\p{L}\p{N}_]+(?:[.-]+[\p{L}\p{N}_]+)*/giu;
  const plain = (s: string) => s.replace(mention, (_m, local: string) => local);
  let countable = '';
  let cursor = 0;
  for (const { indices } of twitter.extractUrlsWithIndices(text, { extractUrlsWithoutProtocol: false })) {
    countable += plain(text.slice(cursor, indices[0])) + 'x'.repeat(23);
    cursor = indices[1];
  }
  countable += plain(text.slice(cursor));
  return [...new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(countable)].length;
}

describe('cutting the text at whitespace changes no count', () => {
  it('X: equal to twitter-text on the whole text, for 4,000 generated texts', () => {
    const next = random(7);
    for (let i = 0; i < 4000; i += 1) {
      const text = randomText(next, 1 + Math.floor(next() * 40));
      const expected = twitter.parseTweet(text).weightedLength;
      const measured = twitterWeight(text, 100_000, parseBudget());
      if (measured.length !== expected || !measured.exact) {
        throw new Error(`twitter ${JSON.stringify(text)}: ${measured.length} != ${expected}`);
      }
    }
  });

  it('Mastodon: equal to the whole-text count, for 4,000 generated texts', () => {
    const next = random(11);
    for (let i = 0; i < 4000; i += 1) {
      const text = randomText(next, 1 + Math.floor(next() * 40));
      const expected = mastodonReference(text);
      const measured = mastodonLength(text, 100_000, parseBudget());
      if (measured.length !== expected || !measured.exact) {
        throw new Error(`mastodon ${JSON.stringify(text)}: ${measured.length} != ${expected}`);
      }
    }
  });

  it('counting stops past the limit with a lower bound', () => {
    const text = 'word '.repeat(1000);
    const measured = twitterWeight(text, 280, parseBudget());
    expect(measured.exact).toBe(false);
    expect(measured.length).toBeGreaterThan(280);
    expect(measured.length).toBeLessThanOrEqual(twitter.parseTweet(text).weightedLength);
  });
});
