import { describe, expect, it } from '@jest/globals';
import {
  dailySlotHours,
  isValidTimeZone,
  nextQueueSlots,
  planQueue,
  type TQueueSettings,
} from '../src/queue-slots.js';

const NY = 'America/New_York';

function settings(overrides: Partial<TQueueSettings> = {}): TQueueSettings {
  return { enabled: true, intervalHours: 4, startHour: 9, endHour: 17, timezone: 'UTC', ...overrides };
}

const iso = (dates: Date[]): string[] => dates.map((d) => d.toISOString());

describe('isValidTimeZone', () => {
  it('accepts IANA zones and rejects junk', () => {
    expect(isValidTimeZone('America/New_York')).toBe(true);
    expect(isValidTimeZone('UTC')).toBe(true);
    expect(isValidTimeZone('Mars/Olympus')).toBe(false);
    expect(isValidTimeZone('')).toBe(false);
  });
});

describe('dailySlotHours', () => {
  it('steps from startHour while <= endHour', () => {
    expect(dailySlotHours(settings({ intervalHours: 2, startHour: 9, endHour: 17 }))).toEqual([
      9, 11, 13, 15, 17,
    ]);
    expect(dailySlotHours(settings({ intervalHours: 4, startHour: 9, endHour: 18 }))).toEqual([9, 13, 17]);
  });

  it('wraps past midnight when endHour < startHour', () => {
    expect(dailySlotHours(settings({ intervalHours: 2, startHour: 22, endHour: 2 }))).toEqual([22, 0, 2]);
    expect(dailySlotHours(settings({ intervalHours: 3, startHour: 23, endHour: 1 }))).toEqual([23]);
  });

  it('gives one slot a day when startHour == endHour or interval is 24', () => {
    expect(dailySlotHours(settings({ startHour: 8, endHour: 8 }))).toEqual([8]);
    expect(dailySlotHours(settings({ intervalHours: 24, startHour: 0, endHour: 23 }))).toEqual([0]);
  });

  it('covers the whole day with interval 1 from 0 to 23', () => {
    expect(dailySlotHours(settings({ intervalHours: 1, startHour: 0, endHour: 23 }))).toHaveLength(24);
  });

  it('rejects out-of-range settings', () => {
    expect(() => dailySlotHours(settings({ intervalHours: 0 }))).toThrow(RangeError);
    expect(() => dailySlotHours(settings({ intervalHours: 25 }))).toThrow(RangeError);
    expect(() => dailySlotHours(settings({ startHour: 24 }))).toThrow(RangeError);
    expect(() => dailySlotHours(settings({ endHour: -1 }))).toThrow(RangeError);
    expect(() => dailySlotHours(settings({ intervalHours: 1.5 }))).toThrow(RangeError);
    expect(() => dailySlotHours(settings({ timezone: 'Nowhere/Land' }))).toThrow(RangeError);
  });
});

describe('nextQueueSlots', () => {
  it('returns the next slots strictly after the given instant, rolling over days', () => {
    const slots = nextQueueSlots(settings(), new Date('2026-01-05T10:00:00Z'), 3);
    expect(iso(slots)).toEqual([
      '2026-01-05T13:00:00.000Z',
      '2026-01-05T17:00:00.000Z',
      '2026-01-06T09:00:00.000Z',
    ]);
  });

  it('excludes a slot equal to `after`', () => {
    const slots = nextQueueSlots(settings(), new Date('2026-01-05T13:00:00Z'), 1);
    expect(iso(slots)).toEqual(['2026-01-05T17:00:00.000Z']);
  });

  it('skips taken instants', () => {
    const taken = [new Date('2026-01-05T13:00:00Z'), new Date('2026-01-06T09:00:00Z')];
    const slots = nextQueueSlots(settings(), new Date('2026-01-05T10:00:00Z'), 3, taken);
    expect(iso(slots)).toEqual([
      '2026-01-05T17:00:00.000Z',
      '2026-01-06T13:00:00.000Z',
      '2026-01-06T17:00:00.000Z',
    ]);
  });

  it('returns [] when disabled or count is 0', () => {
    expect(nextQueueSlots(settings({ enabled: false }), new Date('2026-01-05T10:00:00Z'), 3)).toEqual([]);
    expect(nextQueueSlots(settings(), new Date('2026-01-05T10:00:00Z'), 0)).toEqual([]);
  });

  it('uses local hours in the settings time zone', () => {
    // 09:00 EST = 14:00Z in January.
    const slots = nextQueueSlots(settings({ timezone: NY }), new Date('2026-01-05T12:00:00Z'), 2);
    expect(iso(slots)).toEqual(['2026-01-05T14:00:00.000Z', '2026-01-05T18:00:00.000Z']);
  });

  it('handles a window wrapping past midnight', () => {
    const s = settings({ timezone: NY, intervalHours: 2, startHour: 22, endHour: 2 });
    // 2026-01-05 12:00 EST; slots at local 22:00, 00:00, 02:00.
    const slots = nextQueueSlots(s, new Date('2026-01-05T17:00:00Z'), 4);
    expect(iso(slots)).toEqual([
      '2026-01-06T03:00:00.000Z',
      '2026-01-06T05:00:00.000Z',
      '2026-01-06T07:00:00.000Z',
      '2026-01-07T03:00:00.000Z',
    ]);
  });

  it('the wrapped early-morning slots of the same local day come first', () => {
    const s = settings({ timezone: NY, intervalHours: 2, startHour: 22, endHour: 2 });
    // 2026-01-05 00:30 EST: 02:00 that morning is next, then 22:00.
    const slots = nextQueueSlots(s, new Date('2026-01-05T05:30:00Z'), 2);
    expect(iso(slots)).toEqual(['2026-01-05T07:00:00.000Z', '2026-01-06T03:00:00.000Z']);
  });

  describe('US spring forward (2026-03-08, America/New_York)', () => {
    it('resolves the 02:00 gap slot to 03:00 and does not duplicate it', () => {
      const s = settings({ timezone: NY, intervalHours: 1, startHour: 0, endHour: 4 });
      const slots = nextQueueSlots(s, new Date('2026-03-08T04:00:00Z'), 5);
      expect(iso(slots)).toEqual([
        '2026-03-08T05:00:00.000Z', // 00:00 EST
        '2026-03-08T06:00:00.000Z', // 01:00 EST
        '2026-03-08T07:00:00.000Z', // 02:00 does not exist -> 03:00 EDT, merged with the 03:00 slot
        '2026-03-08T08:00:00.000Z', // 04:00 EDT
        '2026-03-09T04:00:00.000Z', // next day 00:00 EDT
      ]);
      expect(new Set(slots.map((d) => d.getTime())).size).toBe(slots.length);
    });

    it('a lone 02:00 slot moves to 03:00 EDT on the gap day only', () => {
      const s = settings({ timezone: NY, startHour: 2, endHour: 2 });
      const slots = nextQueueSlots(s, new Date('2026-03-07T00:00:00Z'), 3);
      expect(iso(slots)).toEqual([
        '2026-03-07T07:00:00.000Z', // 02:00 EST
        '2026-03-08T07:00:00.000Z', // 03:00 EDT
        '2026-03-09T06:00:00.000Z', // 02:00 EDT
      ]);
    });
  });

  describe('US fall back (2026-11-01, America/New_York)', () => {
    it('uses the earlier offset for the repeated 01:00 hour and creates one slot for it', () => {
      const s = settings({ timezone: NY, intervalHours: 1, startHour: 0, endHour: 3 });
      const slots = nextQueueSlots(s, new Date('2026-11-01T03:00:00Z'), 4);
      expect(iso(slots)).toEqual([
        '2026-11-01T04:00:00.000Z', // 00:00 EDT
        '2026-11-01T05:00:00.000Z', // 01:00 EDT (first occurrence)
        '2026-11-01T07:00:00.000Z', // 02:00 EST
        '2026-11-01T08:00:00.000Z', // 03:00 EST
      ]);
    });

    it('does not offer the second 01:00 when `after` falls between the two', () => {
      const s = settings({ timezone: NY, intervalHours: 1, startHour: 0, endHour: 3 });
      const slots = nextQueueSlots(s, new Date('2026-11-01T05:30:00Z'), 1);
      expect(iso(slots)).toEqual(['2026-11-01T07:00:00.000Z']);
    });
  });

  it('rejects an invalid date', () => {
    expect(() => nextQueueSlots(settings(), new Date('nope'), 1)).toThrow(RangeError);
  });
});

describe('planQueue', () => {
  it('assigns one slot per post in the given order, skipping taken slots', () => {
    const taken = [new Date('2026-01-05T13:00:00Z')];
    expect(planQueue(settings(), new Date('2026-01-05T10:00:00Z'), ['p1', 'p2', 'p3'], taken)).toEqual([
      { postId: 'p1', slot: new Date('2026-01-05T17:00:00Z') },
      { postId: 'p2', slot: new Date('2026-01-06T09:00:00Z') },
      { postId: 'p3', slot: new Date('2026-01-06T13:00:00Z') },
    ]);
  });

  it('returns [] when the queue is disabled or there are no posts', () => {
    expect(planQueue(settings({ enabled: false }), new Date('2026-01-05T10:00:00Z'), ['p1'])).toEqual([]);
    expect(planQueue(settings(), new Date('2026-01-05T10:00:00Z'), [])).toEqual([]);
  });
});
