import { HTTPError } from 'got';
import type { TNetworkFailure } from './connector.js';

// "Daily quotas reset at midnight Pacific Time (PT)"
// (https://developers.google.com/youtube/v3/determine_quota_cost, read 2026-11-24); a channel over its
// upload count gets 400 `uploadLimitExceeded` and should "try again in 24 hours"; `rateLimitExceeded` and
// `userRateLimitExceeded` are short-term (https://developers.google.com/youtube/v3/docs/errors).

const PACIFIC = new Intl.DateTimeFormat('en-US', {
  timeZone: 'America/Los_Angeles',
  hourCycle: 'h23',
  hour: 'numeric',
  minute: 'numeric',
  second: 'numeric',
});

function pacificClock(at: number): { hour: number; minute: number; second: number } {
  const parts = Object.fromEntries(PACIFIC.formatToParts(at).map((p) => [p.type, p.value]));
  return { hour: Number(parts.hour), minute: Number(parts.minute), second: Number(parts.second) };
}

/** Milliseconds until the next midnight in Pacific Time, DST days (23 or 25 hours) included. */
export function msUntilPacificMidnight(now: number = Date.now()): number {
  const { hour, minute, second } = pacificClock(now);
  const elapsed = ((hour * 60 + minute) * 60 + second) * 1000 + (now % 1000);
  let candidate = now + 24 * 3_600_000 - elapsed;
  // On a day of 23 or 25 hours the guess lands an hour off midnight: correct it by the clock shown there.
  const shown = pacificClock(candidate).hour;
  if (shown === 23) candidate += 3_600_000;
  else if (shown === 1) candidate -= 3_600_000;
  return candidate - now;
}

interface TGoogleErrorBody {
  error?: { code?: number; message?: string; errors?: { reason?: string }[] };
}

function reasonsOf(error: unknown): string[] {
  if (!(error instanceof HTTPError)) return [];
  let body = error.response.body as TGoogleErrorBody | string | undefined;
  if (typeof body === 'string') {
    try {
      body = JSON.parse(body) as TGoogleErrorBody;
    } catch {
      return [];
    }
  }
  return (body?.error?.errors ?? []).map((e) => e.reason ?? '').filter(Boolean);
}

/** A minute past the reset, so the retry does not arrive a moment early. */
const RESET_MARGIN_MS = 60_000;

/**
 * Quota and upload limits are waits, not edits, and each has its own horizon: the project's daily
 * quota until midnight PT, the channel's upload count a day, per-user rate limits minutes (the
 * publisher's backoff, or the server's Retry-After).
 */
export function quotaFailure(error: unknown, failure: TNetworkFailure, network: string): TNetworkFailure {
  const reasons = reasonsOf(error);
  if (reasons.includes('quotaExceeded')) {
    const retryAfterMs = msUntilPacificMidnight() + RESET_MARGIN_MS;
    return {
      ...failure,
      kind: 'rate_limited',
      retryAfterMs,
      message: `${network}'s daily API quota is used up (quotaExceeded). The post will be retried after the quota resets at midnight Pacific Time, in ${Math.ceil(retryAfterMs / 3_600_000)} h.`,
    };
  }
  if (reasons.includes('uploadLimitExceeded')) {
    return {
      ...failure,
      kind: 'rate_limited',
      retryAfterMs: 24 * 3_600_000,
      message: `The ${network} channel has uploaded as many videos as it may for now (uploadLimitExceeded). The post will be retried in 24 h.`,
    };
  }
  if (reasons.some((r) => r === 'rateLimitExceeded' || r === 'userRateLimitExceeded')) {
    return {
      ...failure,
      kind: 'rate_limited',
      message: `${network} is limiting the rate of requests (${reasons.join(', ')}). The post will be retried in a few minutes.`,
    };
  }
  return failure;
}
