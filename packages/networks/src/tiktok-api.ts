import type { TNetworkFailure } from './connector.js';
import { classifyHttpError, truncateBody } from './http-client.js';

// TikTok v2 answers and errors (https://developers.tiktok.com/doc/content-posting-api-reference-direct-post,
// error codes; read 2026-11-24).
export const NETWORK = 'TikTok';
/** Errors that only a new authorization fixes. */
const AUTH_CODES = new Set(['access_token_invalid', 'scope_not_authorized']);
/** The creator's daily cap of API posts; waiting, not editing, fixes it. */
const CAP_CODES = new Set(['spam_risk_too_many_posts', 'spam_risk_user_banned_from_posting']);

/** Every TikTok v2 answer: `{ data, error: { code, message, log_id } }`, with `code: "ok"` on success. */
export interface TEnvelope<T> {
  data?: T;
  error?: { code?: string; message?: string; log_id?: string };
}

export interface TCreatorInfo {
  creator_username?: string;
  privacy_level_options?: string[];
  comment_disabled?: boolean;
  duet_disabled?: boolean;
  stitch_disabled?: boolean;
  max_video_post_duration_sec?: number;
}

export interface TStatus {
  status?: string;
  fail_reason?: string;
  publicaly_available_post_id?: (string | number)[];
  uploaded_bytes?: number;
}

/** Saved after init (`init`) and once TikTok has every byte (`uploaded`): a retry resumes, never re-posts. */
/** `waitSince`: when the status checks of an uploaded post began (their deadline is durable). */
export type TProgress = {
  publishId: string;
  stage: 'init' | 'uploaded';
  videoSize?: string;
  waitSince?: string;
};

function errorCode(body: unknown): string | undefined {
  return typeof body === 'object' && body !== null ? (body as TEnvelope<unknown>).error?.code : undefined;
}

export class StepFailure extends Error {
  constructor(readonly failure: TNetworkFailure) {
    super(failure.message);
  }
}

export function classify(error: unknown): TNetworkFailure {
  if (error instanceof StepFailure) return error.failure;
  const failure = classifyHttpError(error, {
    network: NETWORK,
    isAuthError: (_status, body) => AUTH_CODES.has(errorCode(body) ?? ''),
  });
  const code = failure.body ? (failure.body.match(/"code":"([a-z_]+)"/)?.[1] ?? '') : '';
  if (failure.kind === 'rejected' && CAP_CODES.has(code)) {
    return {
      ...failure,
      kind: 'rate_limited',
      retryAfterMs: 60 * 60_000,
      message: `${NETWORK} refused more posts from this creator for now (${code}). The post will be retried in an hour.`,
    };
  }
  return failure;
}

/** TikTok reports errors with a non-2xx status, but a 2xx carrying an error code is not a success either. */
export function unwrap<T>(body: TEnvelope<T>): T {
  const code = body.error?.code;
  if (code && code !== 'ok') {
    const auth = AUTH_CODES.has(code);
    throw new StepFailure({
      kind: auth ? 'auth_expired' : 'rejected',
      body: truncateBody(body),
      message: auth
        ? `${NETWORK} rejected the account's token (${code}). Reconnect the ${NETWORK} account and retry.`
        : `${NETWORK} rejected the post (${code}): ${body.error?.message ?? ''}. Fix the content or account and retry.`,
    });
  }
  if (!body.data)
    throw new StepFailure({ kind: 'transient', message: `${NETWORK} answered without data. Retrying.` });
  return body.data;
}
