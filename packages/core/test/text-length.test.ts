import { describe, expect, it } from '@jest/globals';
import { findTextViolations, measureText, textLength } from '../src/text-length.js';

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
    expect(measureText('👍🏽', 'graphemes')).toBe(1);
    expect(measureText('👨‍👩‍👧‍👦', 'graphemes')).toBe(1);
    expect(measureText('🇩🇪 hi', 'graphemes')).toBe(4);
    expect(measureText('é', 'graphemes')).toBe(1); // e + combining acute
  });

  it('chars: counts code points, so an astral emoji is 1 and a ZWJ family is 7', () => {
    expect(measureText('😀', 'chars')).toBe(1);
    expect(measureText('👨‍👩‍👧‍👦', 'chars')).toBe(7);
    expect(measureText('abc', 'chars')).toBe(3);
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

  it('mastodon: code points elsewhere', () => {
    expect(measureText('😀😀', 'mastodon')).toBe(2);
  });
});

describe('textLength', () => {
  it('uses the network rule', () => {
    const url = `https://example.com/${'x'.repeat(60)}`;
    expect(textLength('twitter', url)).toBe(23);
    expect(textLength('mastodon', url)).toBe(23);
    expect(textLength('linkedin', url)).toBe(url.length);
    expect(textLength('bluesky', '👍🏽')).toBe(1);
    expect(textLength('threads', '👍🏽')).toBe(2);
  });
});

describe('findTextViolations', () => {
  it('returns nothing when every text fits', () => {
    expect(findTextViolations(['twitter', 'bluesky'], ['a'.repeat(280), 'b'.repeat(280)])).toEqual([]);
  });

  it('flags the network and segment that is over its limit', () => {
    expect(findTextViolations(['twitter', 'linkedin'], ['ok', 'a'.repeat(281)])).toEqual([
      { platform: 'twitter', segmentIndex: 1, length: 281, max: 280 },
    ]);
  });

  it('flags the main post as segment 0', () => {
    expect(findTextViolations(['bluesky'], ['a'.repeat(301)])).toEqual([
      { platform: 'bluesky', segmentIndex: 0, length: 301, max: 300 },
    ]);
  });

  it('counts the (X/Y) suffix for numbered networks, pushing a segment over the limit', () => {
    // Discord allows 2000; with the " (2/2)" suffix a 1995-char segment becomes 2001.
    const texts = ['main', 'a'.repeat(1995)];
    expect(findTextViolations(['discord'], texts)).toEqual([
      { platform: 'discord', segmentIndex: 1, length: 2001, max: 2000 },
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
