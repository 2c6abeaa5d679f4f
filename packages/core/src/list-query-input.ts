import { z } from 'zod';

/** A list's `limit` query parameter: an integer from 1 to `max`, `fallback` when omitted. */
export function pageLimitQuery(max: number, fallback: number) {
  const error = `must be an integer from 1 to ${max}`;
  return z.coerce.number({ error }).int({ error }).min(1, { error }).max(max, { error }).default(fallback);
}

/** A list's `offset` query parameter: a non-negative integer up to a million, 0 when omitted. */
export function pageOffsetQuery() {
  const error = 'must be a non-negative integer';
  return z.coerce
    .number({ error })
    .int({ error })
    .min(0, { error })
    .max(1_000_000, { error: 'must be at most 1000000' })
    .default(0);
}

/** The query without its empty values: an empty value means "not given". */
export function givenQueryValues(query: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(query).filter(([, v]) => v !== ''));
}
