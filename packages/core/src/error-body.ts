import { z } from 'zod';
import { ERROR_CODES } from './app-error.js';

// Response schemas (OpenAPI) of the error bodies apps/api/src/http/error-handler.ts writes (`bodyA`, `bodyB`;
// checked against them at compile time in apps/api/src/openapi/openapi-components.ts).

export const ZFieldIssue = z.object({
  field: z.string().meta({ description: 'The field as the caller spelled it, e.g. `segments.2.content`.' }),
  message: z.string(),
});

/** What `details` holds for a validation error; other errors may add their own keys. */
const fieldDetails = {
  field: z.string().optional().meta({ description: 'The first offending field.' }),
  issues: z.array(ZFieldIssue).optional(),
};

const issueCount = z
  .int()
  .optional()
  .meta({ description: 'How many issues there were, when `issues` holds only the first 20.' });

/** Variant A: `{error, fix?, details?}`. */
export const ZErrorBodyA = z.object({
  error: z.string().meta({ description: 'What went wrong; names the field for validation errors.' }),
  fix: z.string().optional().meta({ description: 'What to do about it.' }),
  details: z.looseObject({ ...fieldDetails, issueCount }).optional(),
});

/** Variant B: `{error, code, details}`. */
export const ZErrorBodyB = z.object({
  error: z.string(),
  code: z.enum(ERROR_CODES),
  details: z.looseObject({
    ...fieldDetails,
    issue_count: issueCount,
    fix: z.string().optional().meta({ description: 'What to do about it.' }),
  }),
});

/** Variant B's 429 body. */
export const ZRateLimitedBodyB = z.object({
  error: z.string(),
  code: z.literal('rate_limited'),
  details: z.object({
    limit: z.int(),
    remaining: z.int(),
    reset_at: z.iso.datetime(),
    retry_after: z.int().meta({ description: 'Seconds, as in the Retry-After header.' }),
  }),
});
