import { z } from 'zod';
import type { TFieldIssue } from './app-error.js';

/** Spec limits count characters as people see code points, not UTF-16 units. */
/** A UUID in its text form (any letter case): ids that are not one name nothing, so lookups answer 404. */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function codePointLength(text: string): number {
  let n = 0;
  for (const _ of text) n += 1;
  return n;
}

/**
 * NUL characters and unpaired UTF-16 surrogates cannot be stored (PostgreSQL rejects both in text and
 * jsonb), so text holding them is a validation error rather than a database failure.
 */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
export const UNSTORABLE_TEXT_MESSAGE = 'must not contain NUL characters or unpaired surrogates';

export function isStorableText(value: string): boolean {
  return !value.includes('\u0000') && !LONE_SURROGATE.test(value);
}

/**
 * Text of `min` to `max` characters (code points), not blank when `min > 0`. The JSON Schema keywords in
 * `meta` only describe that for the OpenAPI document; the check is the refinement.
 */
export function ZText(min: number, max: number) {
  const schema = z.string().superRefine((value, ctx) => {
    const length = codePointLength(value);
    if (!isStorableText(value)) {
      ctx.addIssue({ code: 'custom', message: UNSTORABLE_TEXT_MESSAGE });
    } else if (min > 0 && value.trim().length === 0) {
      ctx.addIssue({ code: 'custom', message: 'must not be empty or blank' });
    } else if (length < min || length > max) {
      ctx.addIssue({
        code: 'custom',
        message: `must be ${min === 0 ? 'at most' : `${min} to`} ${max} characters (got ${length})`,
      });
    }
  });
  return schema.meta({ ...(min > 0 ? { minLength: min } : {}), maxLength: max });
}

export const ZHttpUrl = z
  .string({ error: 'must be a URL string' })
  .max(2048, { error: 'must be at most 2048 characters' })
  .refine(isStorableText, { error: UNSTORABLE_TEXT_MESSAGE, abort: true })
  .refine(
    (value) => {
      try {
        const url = new URL(value);
        return url.protocol === 'https:' || url.protocol === 'http:';
      } catch {
        return false;
      }
    },
    { error: 'must be an absolute http(s) URL' },
  )
  .meta({ format: 'uri', description: 'An absolute http(s) URL.' });

/** ISO 8601 date-time that carries a timezone offset (`Z` or `±hh:mm`). */
export const ZOffsetDateTime = z
  .string({ error: 'must be an ISO 8601 date-time string with a timezone offset' })
  .refine((value) => z.iso.datetime({ offset: true }).safeParse(value).success, {
    error: 'must be an ISO 8601 date-time with a timezone offset, e.g. 2026-12-01T09:30:00+01:00',
  })
  .meta({
    format: 'date-time',
    description: 'ISO 8601 with a timezone offset, e.g. 2026-12-01T09:30:00+01:00.',
  })
  .transform((value) => new Date(value));

/** The scheduling rule of both variants: a time to publish at must lie ahead (`field` as the caller spelled it). */
export function futureIssue(date: Date | null | undefined, now: Date, field: string): TFieldIssue | null {
  return date && date.getTime() <= now.getTime() ? { field, message: 'must be in the future' } : null;
}
