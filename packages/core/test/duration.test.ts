import { describe, expect, it } from '@jest/globals';
import { parseDuration, parseDurationList } from '../src/duration.js';

describe('parseDuration', () => {
  it.each([
    ['1500ms', 1500],
    ['30s', 30_000],
    ['1m', 60_000],
    ['2h', 7_200_000],
    ['12h', 43_200_000],
    ['1d', 86_400_000],
    [' 5m ', 300_000],
    ['0s', 0],
  ])('%s -> %d ms', (input, ms) => {
    expect(parseDuration(input)).toBe(ms);
  });

  it.each(['', '5', 'm', '1.5h', '-1m', '1 m', '1w', '1M', '10mss', 'abc', '1h30m'])(
    'rejects %p',
    (input) => {
      expect(() => parseDuration(input)).toThrow(/invalid duration/);
    },
  );

  it('rejects values beyond safe integers', () => {
    expect(() => parseDuration('99999999999999999d')).toThrow(/too large/);
  });
});

describe('parseDurationList', () => {
  it('parses a comma-separated list in order', () => {
    expect(parseDurationList('1m,5m,30m,2h,12h')).toEqual([
      60_000, 300_000, 1_800_000, 7_200_000, 43_200_000,
    ]);
    expect(parseDurationList('1m, 5m')).toEqual([60_000, 300_000]);
  });

  it('throws on an empty or bad item', () => {
    expect(() => parseDurationList('')).toThrow();
    expect(() => parseDurationList('1m,,5m')).toThrow();
    expect(() => parseDurationList('1m,x')).toThrow(/invalid duration "x"/);
  });
});
