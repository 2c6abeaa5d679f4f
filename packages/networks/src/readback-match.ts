import type { TFindOutcome, TNetworkFailure, TPublishedProbe } from './connector.js';

// Shared by the connectors' read-backs (`findPublished`): bounds, the time window and text matching.

/** At most this many pages of an account's recent posts per question (a few reads per segment). */
export const MAX_READ_PAGES = 3;
/** The network's clock and ours differ: the window opens this much before the write-ahead. */
export const CLOCK_SKEW_MS = 2 * 60_000;

export const windowStart = (probe: TPublishedProbe) => new Date(probe.since.getTime() - CLOCK_SKEW_MS);
export const windowEnd = (probe: TPublishedProbe) => new Date(probe.until.getTime() + CLOCK_SKEW_MS);

/** Whether a post's creation time (ISO string, epoch milliseconds or a Date) lies in the probe's window. */
export function inWindow(probe: TPublishedProbe, at: string | number | Date | undefined | null): boolean {
  if (at === undefined || at === null) return true;
  const ms = at instanceof Date ? at.getTime() : typeof at === 'number' ? at : Date.parse(at);
  if (!Number.isFinite(ms)) return true;
  return ms >= windowStart(probe).getTime() && ms <= windowEnd(probe).getTime();
}

const ENTITIES: Record<string, string> = {
  '&amp;': '&',
  '&lt;': '<',
  '&gt;': '>',
  '&quot;': '"',
  '&#39;': "'",
};

/**
 * Whether a post's text is the text that was sent. Networks give it back HTML-escaped (X, Slack) and with
 * links rewritten (X's t.co, Slack's `<url|label>`, a media link appended by X): `ignoreUrls` compares
 * what is left around the links.
 */
export function sameText(sent: string, found: unknown, options: { ignoreUrls?: boolean } = {}): boolean {
  if (typeof found !== 'string') return false;
  const normal = (text: string) => {
    let out = text.normalize('NFC').replace(/&(?:amp|lt|gt|quot|#39);/g, (m) => ENTITIES[m] ?? m);
    if (options.ignoreUrls) out = out.replace(/<[^<>\s]*:\/\/[^<>]*>/g, ' ').replace(/https?:\/\/\S+/g, ' ');
    return out.replace(/\s+/g, ' ').trim();
  };
  return normal(sent) === normal(found);
}

/**
 * A read that failed: a refusal (no permission or scope for the read, a bad request) means the network
 * cannot be asked, anything else (rate limit, server error, timeout, expired token) means ask again later.
 */
export function readFailure(
  error: unknown,
  classify: (error: unknown) => TNetworkFailure,
  network: string,
): TFindOutcome {
  const { outcomeUnknown: _lost, ...failure } = classify(error);
  if (failure.kind === 'rejected') {
    return {
      kind: 'cannot_tell',
      reason: `${network} refused to list the account's posts (HTTP ${failure.status ?? '?'}${failure.body ? `: ${failure.body}` : ''}).`,
    };
  }
  return { kind: 'failed', failure };
}

/** More posts in the window than the read-back's pages hold: a person looks instead of a guess. */
export function tooMany(network: string, read: number): TFindOutcome {
  return {
    kind: 'cannot_tell',
    reason: `${network} showed ${read} posts of the account in the time window without this one, and the service reads back no further.`,
  };
}
