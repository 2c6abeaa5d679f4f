import { STATUS_A, STATUS_B } from '../http/error-mapping.js';
import { schemaRef, type TJsonSchema } from './openapi-components.js';

// Error responses and headers of each variant: bodies from error-handler.ts (`bodyA`, `bodyB`), statuses
// from error-mapping.ts, rate-limit headers from rate-limit.ts.

export type TVariant = 'A' | 'B';

/** Statuses an operation documents besides its success; each must be one the variant's error mapping uses. */
export type TErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 415 | 422 | 429 | 500 | 503;

const WHY: Record<TVariant, Partial<Record<TErrorStatus, string>>> = {
  A: {
    400: 'Validation error (the message and `details.field` name the field), or the post is in the wrong state for this call.',
    401: 'Missing or invalid API key.',
    403: 'No active plan, or the monthly allowance for `twitter` publishing is used up.',
    404: 'No such post in this account.',
    409: 'A request with the same `Idempotency-Key` is still running (`details.code` `idempotency_key_in_use`), or the media item is used by pending posts (`media_in_use`, their ids in `details.post_ids`).',
    413: "The request body is larger than the limit, or an upload is over the plan's per-file cap or the account's media storage quota.",
    415: 'The uploaded file is no media type any network takes (`unsupported_media_type`); the type is read from the bytes.',
    422: 'The `Idempotency-Key` was used for another request (another route or body) in the last 24 hours (`details.code` `idempotency_key_reused`).',
    429: 'Rate limit exceeded (per IP address: requests per minute, publishing per hour). Retry after `Retry-After` seconds.',
    500: 'Server error. Safe to retry.',
    503: 'The database or job queue is busy or unreachable. Retry after `Retry-After` seconds.',
  },
  B: {
    400: 'Validation error; `details.field` and `details.issues` name the fields.',
    401: 'Missing or invalid API key.',
    404: 'No such resource in this account.',
    409: 'The resource is in a state that does not allow this call (e.g. update or publish of a published post), a media item still used by pending posts (`media_in_use`), or a request with the same `Idempotency-Key` is still running (`idempotency_key_in_use`).',
    413: "The request body is larger than the limit, or an upload is over the plan's per-file cap or the account's media storage quota.",
    415: 'The uploaded file is no media type any network takes (`unsupported_media_type`); the type is read from the bytes.',
    422: 'Content exceeds a network limit, media a network cannot take (`media_not_supported`, naming the item), no valid connected account exists for the listed networks, or the `Idempotency-Key` was used for another request in the last 24 hours (`idempotency_key_reused`).',
    429: 'Rate limit exceeded for this API key (per minute, or publishes per hour). Retry after `Retry-After` seconds.',
    500: 'Server error. Safe to retry.',
    503: 'The database or job queue is busy or unreachable. Retry after `Retry-After` seconds.',
  },
};

/** The component name of a variant's error response, e.g. `ErrorA404`. */
const responseName = (variant: TVariant, status: TErrorStatus) => `Error${variant}${status}`;

/** Variant B sets these on every authenticated response (also 4xx), before the route runs. */
const RATE_LIMIT_HEADERS_B = {
  'X-RateLimit-Limit': { $ref: '#/components/headers/XRateLimitLimit' },
  'X-RateLimit-Remaining': { $ref: '#/components/headers/XRateLimitRemaining' },
  'X-RateLimit-Reset': { $ref: '#/components/headers/XRateLimitReset' },
};

/** Headers of a variant's success responses. */
export function successHeaders(variant: TVariant): Record<string, unknown> | undefined {
  return variant === 'B' ? RATE_LIMIT_HEADERS_B : undefined;
}

function errorResponse(variant: TVariant, status: TErrorStatus): TJsonSchema {
  const description = WHY[variant][status];
  if (!description) throw new Error(`OpenAPI: Variant ${variant} does not answer ${status}`);
  const schema =
    variant === 'A'
      ? schemaRef('ErrorA')
      : status === 429
        ? schemaRef('RateLimitedErrorB')
        : schemaRef('ErrorB');
  // Authentication runs before Variant B's rate limiter, so a 401 carries no rate-limit headers.
  const headers: Record<string, unknown> =
    variant === 'B' && status !== 401 ? { ...RATE_LIMIT_HEADERS_B } : {};
  if (status === 429 || status === 503) headers['Retry-After'] = { $ref: '#/components/headers/RetryAfter' };
  return {
    description,
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
    content: { 'application/json': { schema } },
  };
}

/** `components.responses` and `components.headers`. */
export function errorComponents(): {
  responses: Record<string, TJsonSchema>;
  headers: Record<string, TJsonSchema>;
} {
  const responses: Record<string, TJsonSchema> = {};
  for (const variant of ['A', 'B'] as const) {
    const mapped = new Set(Object.values(variant === 'A' ? STATUS_A : STATUS_B));
    for (const status of Object.keys(WHY[variant]).map(Number) as TErrorStatus[]) {
      if (!mapped.has(status))
        throw new Error(`OpenAPI: no error code maps to ${status} in Variant ${variant}`);
      responses[responseName(variant, status)] = errorResponse(variant, status);
    }
  }
  const integer = { type: 'integer' };
  return {
    responses,
    headers: {
      XRateLimitLimit: { description: 'Maximum requests per window.', schema: integer },
      XRateLimitRemaining: { description: 'Requests left in the current window.', schema: integer },
      XRateLimitReset: { description: 'Unix timestamp in seconds when the window resets.', schema: integer },
      RetryAfter: { description: 'Seconds to wait before retrying.', schema: integer },
    },
  };
}

/** An operation's error responses, by reference. */
export function errorResponses(
  variant: TVariant,
  statuses: readonly TErrorStatus[],
): Record<string, unknown> {
  // Every operation reads or writes PostgreSQL, so every one can answer 503.
  const all = statuses.includes(503) ? statuses : [...statuses, 503 as const];
  return Object.fromEntries(
    all.map((status) => [
      String(status),
      { $ref: `#/components/responses/${responseName(variant, status)}` },
    ]),
  );
}

export const SECURITY_SCHEMES = {
  bearerAuth: {
    type: 'http',
    scheme: 'bearer',
    description: 'The API key as `Authorization: Bearer <API_KEY>` (both variants).',
  },
  apiKeyHeader: {
    type: 'apiKey',
    in: 'header',
    name: 'x-api-key',
    description: 'The API key as `x-api-key: <API_KEY>` (Variant A only).',
  },
};

/** Either scheme authenticates a Variant A request; Variant B takes Bearer only. */
export function securityOf(variant: TVariant): Record<string, string[]>[] {
  return variant === 'A' ? [{ bearerAuth: [] }, { apiKeyHeader: [] }] : [{ bearerAuth: [] }];
}
