import { describe, expect, it } from '@jest/globals';
import { findTextViolations, measureFor, textLength } from '../src/text-length.js';

const measureText = (text: string, platform: 'twitter' | 'mastodon' | 'bluesky') =>
  measureFor(platform, text).length;

describe('measureText', () => {
  it('twitter: 280 weighted characters fit, 281 do not', () => {
    expect(measureText('a'.repeat(280), 'twitter')).toBe(280);
    expect(measureText('a'.repeat(281), 'twitter')).toBe(281);
  });

  it('twitter: a long URL counts 23', () => {
    const url = `https://example.com/${'x'.repeat(200)}`;
    expect(measureText(url, 'twitter')).toBe(23);
    expect(measureText(`see ${url}`, 'twitter')).toBe(27);
  });

  it('twitter: CJK counts 2 per character', () => {
    expect(measureText('日本語', 'twitter')).toBe(6);
    expect(measureText('한국어', 'twitter')).toBe(6);
  });

  it('graphemes: emoji sequences count once (Bluesky)', () => {
    expect(measureText('👍🏽', 'bluesky')).toBe(1);
    expect(measureText('👨‍👩‍👧‍👦', 'bluesky')).toBe(1);
    expect(measureText('🇩🇪 hi', 'bluesky')).toBe(4);
    expect(measureText('é', 'bluesky')).toBe(1); // e + combining acute
  });

  it('mastodon: each http(s) URL counts 23', () => {
    const long = `https://example.com/${'x'.repeat(100)}`;
    expect(measureText(long, 'mastodon')).toBe(23);
    expect(measureText(`a ${long} b http://short.io`, 'mastodon')).toBe(2 + 23 + 3 + 23);
  });

  it('mastodon: a bare domain without scheme counts as plain text', () => {
    expect(measureText('example.com', 'mastodon')).toBe(11);
  });

  it('mastodon: a remote mention counts only @user', () => {
    expect(measureText('@alice@mastodon.social', 'mastodon')).toBe(6);
    expect(measureText('hi @bob@example.org and @carol', 'mastodon')).toBe('hi @bob and @carol'.length);
  });

  it('mastodon: an @user@domain glued to a preceding word is not a mention', () => {
    expect(measureText('x@alice@example.org', 'mastodon')).toBe(19);
  });

  it('mastodon: an @ inside a URL does not count as a mention', () => {
    expect(measureText('https://example.com/@alice@example.org', 'mastodon')).toBe(23);
  });

  it('mastodon: graphemes elsewhere (each_grapheme_cluster), so a ZWJ family is 1', () => {
    expect(measureText('😀😀', 'mastodon')).toBe(2);
    expect(measureText('👨‍👩‍👧‍👦 é', 'mastodon')).toBe(3);
  });
});

describe('textLength', () => {
  it('uses the network rule', () => {
    const url = `https://example.com/${'x'.repeat(60)}`;
    expect(textLength('twitter', url)).toBe(23);
    expect(textLength('mastodon', url)).toBe(23);
    expect(textLength('linkedin', url)).toBe(url.length);
    expect(textLength('bluesky', '👍🏽')).toBe(1);
    // Threads counts an emoji as its UTF-8 bytes: 👍 and 🏽 are 4 each.
    expect(textLength('threads', '👍🏽')).toBe(8);
  });
});

describe('findTextViolations', () => {
  it('returns nothing when every text fits', () => {
    expect(findTextViolations(['twitter', 'bluesky'], ['a'.repeat(280), 'b'.repeat(280)])).toEqual([]);
  });

  it('flags the network and segment that is over its limit', () => {
    expect(findTextViolations(['twitter', 'linkedin'], ['ok', 'a'.repeat(281)])).toEqual([
      {
        platform: 'twitter',
        segmentIndex: 1,
        length: 281,
        max: 280,
        exact: true,
        unit: 'weighted characters',
      },
    ]);
  });

  it('flags the main post as segment 0', () => {
    expect(findTextViolations(['bluesky'], ['a'.repeat(301)])).toEqual([
      { platform: 'bluesky', segmentIndex: 0, length: 301, max: 300, exact: true, unit: 'graphemes' },
    ]);
  });

  it('counts the (X/Y) suffix for numbered networks, pushing a segment over the limit', () => {
    // Discord allows 2000; with the " (2/2)" suffix a 1995-char segment becomes 2001.
    const texts = ['main', 'a'.repeat(1995)];
    expect(findTextViolations(['discord'], texts)).toEqual([
      {
        platform: 'discord',
        segmentIndex: 1,
        length: 2001,
        max: 2000,
        exact: true,
        unit: 'UTF-16 code units',
      },
    ]);
    expect(findTextViolations(['discord'], ['a'.repeat(1995)])).toEqual([]);
  });

  it('does not add a suffix for reply-chain networks', () => {
    expect(findTextViolations(['twitter'], ['main', 'a'.repeat(280)])).toEqual([]);
  });

  it('reports each platform once even if listed twice', () => {
    expect(findTextViolations(['twitter', 'twitter'], ['a'.repeat(300)])).toHaveLength(1);
  });
});

describe('each network counts in its own unit', () => {
  it('bluesky: 300 graphemes and also at most 3,000 UTF-8 bytes', () => {
    // 300 CJK characters are 300 graphemes but 900 bytes: fine.
    expect(findTextViolations(['bluesky'], ['日'.repeat(300)])).toEqual([]);
    // 250 family emoji are 250 graphemes but 6,250 bytes: over the byte cap.
    const families = '👨‍👩‍👧‍👦'.repeat(250);
    expect(findTextViolations(['bluesky'], [families])).toEqual([
      { platform: 'bluesky', segmentIndex: 0, length: 6250, max: 3000, exact: true, unit: 'UTF-8 bytes' },
    ]);
  });

  it('youtube: the description counts UTF-8 bytes, < and > as the 3-byte ‹ › the connector sends', () => {
    expect(textLength('youtube', 'ab')).toBe(2);
    expect(textLength('youtube', 'é日😀')).toBe(2 + 3 + 4);
    expect(textLength('youtube', '<b>')).toBe(7);
    expect(findTextViolations(['youtube'], ['日'.repeat(1667)])).toHaveLength(1); // 5,001 bytes
    expect(findTextViolations(['youtube'], ['a'.repeat(5000)])).toEqual([]);
  });

  it('tiktok: UTF-16 code units, so an astral emoji counts 2', () => {
    expect(textLength('tiktok', '😀a')).toBe(3);
    expect(findTextViolations(['tiktok'], ['😀'.repeat(1101)])).toHaveLength(1);
    expect(findTextViolations(['tiktok'], ['😀'.repeat(1100)])).toEqual([]);
  });

  it('threads: characters, emoji as their UTF-8 bytes', () => {
    expect(textLength('threads', 'héllo 日本')).toBe(8);
    expect(textLength('threads', '❤️')).toBe(6); // U+2764 U+FE0F: 3 + 3 bytes
    expect(findTextViolations(['threads'], ['😀'.repeat(125)])).toEqual([]); // 500 bytes
    expect(findTextViolations(['threads'], [`${'😀'.repeat(125)}!`])).toHaveLength(1);
  });

  it('a text over the limit that was not counted to its end is reported as "more than"', () => {
    const [violation] = findTextViolations(['mastodon'], ['a'.repeat(63206)]);
    expect(violation).toMatchObject({ platform: 'mastodon', max: 500, exact: false });
    expect(violation?.length).toBeGreaterThan(500);
  });
});
