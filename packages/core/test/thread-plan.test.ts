import { describe, expect, it } from '@jest/globals';
import { counterSuffix, planThreadDelivery, threadTextLimit, usesCounterSuffix } from '../src/thread-plan.js';

describe('counterSuffix', () => {
  it('is 1-based with a leading space', () => {
    expect(counterSuffix(0, 3)).toBe(' (1/3)');
    expect(counterSuffix(2, 3)).toBe(' (3/3)');
  });
});

describe('planThreadDelivery', () => {
  it('single post: one item, no counter, no reply, for every group', () => {
    for (const platform of ['twitter', 'facebook', 'slack', 'tiktok'] as const) {
      expect(planThreadDelivery(platform, ['hello'])).toEqual([
        { segmentIndex: 0, text: 'hello', replyToSegment: null, rootSegment: null },
      ]);
    }
  });

  it('reply_chain: each segment replies to the previous one, rooted at the main post', () => {
    for (const platform of ['twitter', 'bluesky', 'mastodon', 'threads'] as const) {
      expect(planThreadDelivery(platform, ['a', 'b', 'c'])).toEqual([
        { segmentIndex: 0, text: 'a', replyToSegment: null, rootSegment: null },
        { segmentIndex: 1, text: 'b', replyToSegment: 0, rootSegment: 0 },
        { segmentIndex: 2, text: 'c', replyToSegment: 1, rootSegment: 0 },
      ]);
    }
  });

  it.each([
    ['comment', 'facebook'],
    ['comment', 'instagram'],
    ['comment', 'linkedin'],
    ['comment', 'youtube'],
    ['native_message', 'slack'],
    ['native_message', 'discord'],
    ['native_message', 'telegram'],
    ['sequential_counter', 'tiktok'],
  ] as const)('%s (%s): separate numbered posts', (_group, platform) => {
    expect(planThreadDelivery(platform, ['a', 'b', 'c'])).toEqual([
      { segmentIndex: 0, text: 'a (1/3)', replyToSegment: null, rootSegment: null },
      { segmentIndex: 1, text: 'b (2/3)', replyToSegment: null, rootSegment: null },
      { segmentIndex: 2, text: 'c (3/3)', replyToSegment: null, rootSegment: null },
    ]);
  });

  it('returns no items for no texts', () => {
    expect(planThreadDelivery('twitter', [])).toEqual([]);
  });

  it('usesCounterSuffix matches the plan', () => {
    expect(usesCounterSuffix('tiktok', 2)).toBe(true);
    expect(usesCounterSuffix('tiktok', 1)).toBe(false);
    expect(usesCounterSuffix('twitter', 2)).toBe(false);
  });
});

describe('threadTextLimit', () => {
  it('picks the tightest reply-chain network', () => {
    expect(threadTextLimit(['mastodon', 'twitter', 'bluesky'])).toEqual({ platform: 'twitter', max: 280 });
    expect(threadTextLimit(['mastodon', 'bluesky', 'linkedin'])).toEqual({ platform: 'bluesky', max: 300 });
  });

  it('ignores networks that do not thread natively', () => {
    expect(threadTextLimit(['linkedin', 'threads'])).toEqual({ platform: 'threads', max: 500 });
  });

  it('is null when no network threads natively', () => {
    expect(threadTextLimit(['linkedin', 'tiktok'])).toBeNull();
    expect(threadTextLimit([])).toBeNull();
  });
});
