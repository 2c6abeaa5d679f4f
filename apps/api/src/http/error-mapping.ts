import { AppError, type TErrorCode } from '@sps/core';
import { isDbUnavailable } from '@sps/db';

/** One table per variant: the same semantic code can mean different statuses (A 400 vs B 409/422). */
export const STATUS_A: Record<TErrorCode, number> = {
  validation_error: 400,
  malformed_json: 400,
  payload_too_large: 413,
  unauthorized: 401,
  forbidden: 403,
  plan_required: 403,
  quota_exceeded: 403,
  not_found: 404,
  conflict: 400,
  post_not_editable: 400,
  post_not_publishable: 400,
  post_not_pending: 400,
  nothing_to_retry: 400,
  content_too_long: 400,
  media_not_supported: 400,
  unsupported_media_type: 415,
  media_in_use: 409,
  no_connected_account: 400,
  network_unavailable: 400,
  credential_refused: 400,
  rate_limited: 429,
  idempotency_key_in_use: 409,
  idempotency_key_reused: 422,
  service_unavailable: 503,
  internal_error: 500,
};

export const STATUS_B: Record<TErrorCode, number> = {
  ...STATUS_A,
  conflict: 409,
  post_not_editable: 409,
  post_not_publishable: 409,
  post_not_pending: 409,
  nothing_to_retry: 409,
  content_too_long: 422,
  media_not_supported: 422,
  no_connected_account: 422,
  network_unavailable: 422,
  credential_refused: 422,
};

/** Errors thrown by express's body parser and anything unexpected, as AppErrors. */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  const e = error as { type?: string; status?: number; expose?: boolean; limit?: number };
  if (e?.type === 'entity.parse.failed') {
    return new AppError('malformed_json', 'The request body is not valid JSON', {
      issues: [{ field: 'body', message: 'is not valid JSON' }],
      fix: 'Send a JSON object with Content-Type: application/json.',
    });
  }
  if (e?.type === 'entity.too.large') {
    return new AppError(
      'payload_too_large',
      `The request body is larger than the limit of ${e.limit ?? 'the server'} bytes`,
      {
        issues: [{ field: 'body', message: 'is too large' }],
      },
    );
  }
  if (e?.status && e.status >= 400 && e.status < 500 && e.expose) {
    return new AppError('validation_error', (error as Error).message, {
      issues: [{ field: 'body', message: (error as Error).message }],
    });
  }
  if (isDbUnavailable(error)) {
    return new AppError(
      'service_unavailable',
      'The database or the job queue is busy or unreachable right now',
      {
        fix: 'Retry after the number of seconds in Retry-After.',
        retryAfter: 2,
      },
    );
  }
  return new AppError('internal_error', 'Internal server error. It is safe to retry.');
}
