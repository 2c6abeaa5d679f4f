import { DateTime, IANAZone } from 'luxon';

/** Variant A interval queue settings (spec, QueueSettings). */
export interface TQueueSettings {
  enabled: boolean;
  intervalHours: number;
  startHour: number;
  endHour: number;
  timezone: string;
}

export function isValidTimeZone(tz: string): boolean {
  return IANAZone.isValidZone(tz);
}

function assertSettings(settings: TQueueSettings): void {
  const { intervalHours, startHour, endHour } = settings;
  if (!Number.isInteger(intervalHours) || intervalHours < 1 || intervalHours > 24) {
    throw new RangeError(`intervalHours must be an integer from 1 to 24, got ${intervalHours}`);
  }
  for (const [name, hour] of [
    ['startHour', startHour],
    ['endHour', endHour],
  ] as const) {
    if (!Number.isInteger(hour) || hour < 0 || hour > 23) {
      throw new RangeError(`${name} must be an integer from 0 to 23, got ${hour}`);
    }
  }
  if (!isValidTimeZone(settings.timezone)) {
    throw new RangeError(`unknown time zone: ${settings.timezone}`);
  }
}

/**
 * Slot hours in window order, starting at startHour. An endHour before startHour means the window
 * runs past midnight, so 22→2 every 2h gives [22, 0, 2].
 */
export function dailySlotHours(settings: TQueueSettings): number[] {
  assertSettings(settings);
  const { intervalHours, startHour, endHour } = settings;
  const windowLength = (endHour - startHour + 24) % 24;
  const hours: number[] = [];
  for (let offset = 0; offset <= windowLength; offset += intervalHours) {
    hours.push((startHour + offset) % 24);
  }
  return hours;
}

/**
 * Resolves a local wall-clock hour to an instant. Luxon picks the later offset for an ambiguous
 * fall-back hour, but the queue wants the first occurrence, so the earliest candidate wins. Hours in
 * a spring-forward gap come back shifted forward by luxon.
 */
function slotInstant(date: DateTime, hour: number): number {
  const local = date.set({ hour, minute: 0, second: 0, millisecond: 0 });
  return Math.min(...local.getPossibleOffsets().map((candidate) => candidate.toMillis()));
}

/**
 * The next `count` free slot instants strictly after `after`, ascending. Each wall-clock hour yields
 * at most one slot, and a gap hour that lands on the next slot's instant collapses into one slot.
 */
export function nextQueueSlots(
  settings: TQueueSettings,
  after: Date,
  count: number,
  taken: readonly Date[] = [],
): Date[] {
  if (!settings.enabled || count <= 0) return [];
  const afterMs = after.getTime();
  if (Number.isNaN(afterMs)) throw new RangeError('after is not a valid date');
  const hours = [...dailySlotHours(settings)].sort((a, b) => a - b);
  const takenMs = new Set(taken.map((d) => d.getTime()));
  const seen = new Set<number>();
  const slots: number[] = [];

  // Start a day early so an hour that DST shifts across midnight is never skipped; instants at or
  // before `after` are filtered out below anyway.
  let day = DateTime.fromMillis(afterMs, { zone: settings.timezone }).startOf('day').minus({ days: 1 });
  // Every day contributes at least one distinct instant, so this terminates.
  while (slots.length < count) {
    const dayInstants = hours.map((hour) => slotInstant(day, hour)).sort((a, b) => a - b);
    for (const ms of dayInstants) {
      if (ms <= afterMs || seen.has(ms)) continue;
      seen.add(ms);
      if (takenMs.has(ms)) continue;
      slots.push(ms);
      if (slots.length === count) break;
    }
    day = day.plus({ days: 1 }).startOf('day');
  }
  return slots.map((ms) => new Date(ms));
}

/** Pairs posts (in the given order) with the next free slots, one post per slot. */
export function planQueue(
  settings: TQueueSettings,
  after: Date,
  postIds: readonly string[],
  taken: readonly Date[] = [],
): { postId: string; slot: Date }[] {
  const slots = nextQueueSlots(settings, after, postIds.length, taken);
  return slots.map((slot, i) => ({ postId: postIds[i]!, slot }));
}
