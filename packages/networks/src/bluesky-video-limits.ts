import type { TNetworkFailure } from './connector.js';
import { truncateBody } from './http-client.js';

const NETWORK = 'Bluesky';

/**
 * app.bsky.video.getUploadLimits: `canUpload` (required), `remainingDailyVideos`, `remainingDailyBytes`,
 * `message`, `error`. https://docs.bsky.app/docs/api/app-bsky-video-get-upload-limits
 * https://github.com/bluesky-social/atproto/blob/main/lexicons/app/bsky/video/getUploadLimits.json
 */
export interface TUploadLimits {
  canUpload?: boolean;
  remainingDailyVideos?: number;
  remainingDailyBytes?: number;
  message?: string;
  error?: string;
}

/**
 * The video service's reasons for a reached daily limit, as Bluesky's app matches them (its comment points
 * at the service's permission check): "User has exceeded daily upload bytes limit" and "User has exceeded
 * daily upload videos limit". They come as getUploadLimits' `message` (canUpload false) and as uploadVideo's
 * `error` (an answer without a job). https://github.com/bluesky-social/social-app/blob/main/src/state/queries/video/video.ts
 * Every other refusal (no verified e-mail, an account too young, uploads not allowed) is no wait: it stays
 * `rejected`.
 */
const DAILY_LIMIT = /exceeded daily upload (bytes|videos) limit/i;

/**
 * When to look again after a daily limit: the service gives no reset time (getUploadLimits has none; the
 * blog announced "25 videos or 10 GB of video per day", https://bsky.social/about/blog/09-11-2024-video),
 * nor whether the day is a calendar day or the last 24 hours. A slot may free at any time within 24 h,
 * so the post is re-checked every 4 h: a publish job has 8 attempts (packages/queue job-catalog) and each
 * rate-limited retry spends one, so 7 re-checks 4 h apart span 28 h, past any daily window, where 1 h
 * re-checks would give the post up after 7 h while the day's limit still held.
 */
export const BLUESKY_DAILY_LIMIT_RECHECK_MS = 4 * 60 * 60_000;

const textOf = (body: { message?: unknown; error?: unknown } | null | undefined) =>
  [body?.message, body?.error].filter((v): v is string => typeof v === 'string').join(' ');

function dailyLimitFailure(reason: string, body: unknown, retryAfterMs?: number): TNetworkFailure {
  const waitMs = retryAfterMs ?? BLUESKY_DAILY_LIMIT_RECHECK_MS;
  return {
    kind: 'rate_limited',
    retryAfterMs: waitMs,
    body: truncateBody(body),
    message: `${NETWORK}'s daily video upload limit for this account is reached (${reason}). The post will be retried in ${Math.ceil(waitMs / 60_000)} min${retryAfterMs === undefined ? "; Bluesky does not say when the day's limit resets" : ''}.`,
  };
}

/**
 * What getUploadLimits says about a video of `size` bytes: a reached daily limit (a wait, `rate_limited`),
 * another refusal (`rejected`), or null (upload). A canUpload true with fewer bytes left than the video has
 * is a limit too: the service refuses the upload with the bytes reason (its check adds the video's size).
 */
export function uploadLimitsFailure(limits: TUploadLimits, size: number): TNetworkFailure | null {
  const said = textOf(limits);
  if (limits.canUpload === false) {
    // Without a reason, nothing left today says which limit it is; a named other reason wins over counts.
    const daily =
      DAILY_LIMIT.test(said) ||
      (!said && (limits.remainingDailyVideos === 0 || limits.remainingDailyBytes === 0));
    if (daily) return dailyLimitFailure(said || 'no videos or bytes left today', limits);
    return {
      kind: 'rejected',
      body: truncateBody(limits),
      message: `${NETWORK} does not let this account upload a video now${said ? `: ${said}` : ''} (accounts need a verified e-mail address). Post without the video or retry later.`,
    };
  }
  if (typeof limits.remainingDailyBytes === 'number' && limits.remainingDailyBytes < size) {
    return dailyLimitFailure(`${limits.remainingDailyBytes} bytes left today, the video has ${size}`, limits);
  }
  return null;
}

/**
 * uploadVideo's answer without a job or blob (an error status or not) that names a daily limit; a
 * `ratelimit-reset` header (epoch seconds), should the service send one, sets the wait.
 */
export function uploadAnswerFailure(
  body: { message?: unknown; error?: unknown } | null | undefined,
  headers?: Record<string, string | string[] | undefined>,
): TNetworkFailure | null {
  const said = textOf(body);
  if (!DAILY_LIMIT.test(said)) return null;
  const raw = headers?.['ratelimit-reset'];
  const reset = Number(Array.isArray(raw) ? raw[0] : raw);
  const retryAfterMs =
    Number.isFinite(reset) && reset > 0 ? Math.max(0, reset * 1000 - Date.now()) : undefined;
  return dailyLimitFailure(said, body, retryAfterMs);
}
