const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

type TUnit = keyof typeof UNIT_MS;

// Integers only: fractional values like 1.5h are rejected rather than silently rounded.
const DURATION_RE = /^(\d+)(ms|s|m|h|d)$/;

/** Parses `1500ms`, `30s`, `1m`, `2h`, `1d` into milliseconds; anything else throws. */
export function parseDuration(input: string): number {
  const match = DURATION_RE.exec(input.trim());
  if (!match) throw new Error(`invalid duration "${input}": expected e.g. 1500ms, 30s, 5m, 2h or 1d`);
  const ms = Number(match[1]) * UNIT_MS[match[2] as TUnit];
  if (!Number.isSafeInteger(ms)) throw new Error(`duration "${input}" is too large`);
  return ms;
}

/** Parses a comma-separated list such as `1m,5m,30m,2h,12h`; an empty item is an error. */
export function parseDurationList(input: string): number[] {
  return input.split(',').map((item) => parseDuration(item));
}
