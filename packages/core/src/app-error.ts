/**
 * Semantic error codes. Each variant maps a code to its own status and body (e.g. `post_not_editable`
 * is 400 in Variant A and 409 in Variant B), so services never choose HTTP statuses.
 */
export const ERROR_CODES = [
  'validation_error',
  'malformed_json',
  'payload_too_large',
  'unauthorized',
  /** Authenticated, but the request is refused (a dashboard request without its CSRF token). */
  'forbidden',
  'plan_required',
  'quota_exceeded',
  'not_found',
  'conflict',
  'post_not_editable',
  'post_not_publishable',
  'post_not_pending',
  'nothing_to_retry',
  'content_too_long',
  'media_not_supported',
  /** An upload whose bytes are no type any network takes (415). */
  'unsupported_media_type',
  /** A media item a pending post still uses cannot be deleted (409, naming the posts). */
  'media_in_use',
  'no_connected_account',
  'network_unavailable',
  /** A network refused a credential given to connect an account (B 422 naming the field). */
  'credential_refused',
  'rate_limited',
  /** `Idempotency-Key`: a request with this key is still running (409). */
  'idempotency_key_in_use',
  /** `Idempotency-Key`: the key was used for another request (another route or body) in the last 24 hours (422). */
  'idempotency_key_reused',
  'service_unavailable',
  'internal_error',
] as const;
export type TErrorCode = (typeof ERROR_CODES)[number];

/** A field that failed validation, named as the caller spelled it (`scheduledFor`, `segments.2.content`). */
export interface TFieldIssue {
  field: string;
  message: string;
}

export interface TAppErrorOptions {
  /** What the caller can do about it (Variant A's `fix`). */
  fix?: string;
  issues?: TFieldIssue[];
  /** How many issues there were when `issues` holds only the first ones. */
  issueCount?: number;
  /** Extra machine-readable details (merged into the variant's `details`). */
  details?: Record<string, unknown>;
  /** Seconds, for rate limits. */
  retryAfter?: number;
}

export class AppError extends Error {
  readonly code: TErrorCode;
  readonly fix: string | undefined;
  readonly issues: TFieldIssue[];
  /** All issues found; more than `issues.length` when only the first MAX_REPORTED_ISSUES are reported. */
  readonly issueCount: number;
  readonly details: Record<string, unknown>;
  readonly retryAfter: number | undefined;

  constructor(code: TErrorCode, message: string, options: TAppErrorOptions = {}) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.fix = options.fix;
    this.issues = options.issues ?? [];
    this.issueCount = Math.max(options.issueCount ?? 0, this.issues.length);
    this.details = options.details ?? {};
    this.retryAfter = options.retryAfter;
  }
}

/**
 * Issues reported in one answer: a body of a megabyte of wrong types could otherwise produce an answer of
 * tens of megabytes. The count of all of them is reported alongside.
 */
export const MAX_REPORTED_ISSUES = 20;

export function validationError(issues: TFieldIssue[], fix?: string): AppError {
  const first = issues[0];
  const message = first ? `${first.field}: ${first.message}` : 'Invalid request';
  const more =
    issues.length > 1 ? ` (and ${issues.length - 1} more problem${issues.length > 2 ? 's' : ''})` : '';
  return new AppError('validation_error', message + more, {
    issues: issues.slice(0, MAX_REPORTED_ISSUES),
    issueCount: issues.length,
    ...(fix ? { fix } : {}),
  });
}
