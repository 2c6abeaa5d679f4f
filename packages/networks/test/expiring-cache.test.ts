import { describe, expect, it } from '@jest/globals';
import { createExpiringCache } from '../src/expiring-cache.js';

describe('createExpiringCache', () => {
  it('keeps a stored null apart from a missing key', () => {
    const cache = createExpiringCache<string | null>(60_000, 10);
    cache.set('gone.example', null);
    expect(cache.get('gone.example')).toBeNull();
    expect(cache.get('never.example')).toBeUndefined();
  });

  it('forgets the oldest stored key first, and storing a key again makes it the newest', () => {
    const cache = createExpiringCache<number>(60_000, 2);
    cache.set('a', 1);
    cache.set('b', 2);
    cache.set('a', 3);
    cache.set('c', 4);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBe(3);
    expect(cache.get('c')).toBe(4);
  });

  it('does not answer with an expired value', () => {
    const cache = createExpiringCache<number>(0, 2);
    cache.set('a', 1);
    expect(cache.get('a')).toBeUndefined();
  });
});
