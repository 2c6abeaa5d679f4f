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
 * Whether a post's text is the text that was sent. Networks give it back HTML-escaped (X, Slack); links
 * must be given back expanded (see `expandXLinks`, `unwrapSlackLinks`), so two posts that differ only by
 * their link are told apart. `schemeless` compares links without their `http(s)://`: X expands a link
 * typed without one to `http://…`.
 */
export function sameText(sent: string, found: unknown, options: { schemeless?: boolean } = {}): boolean {
  if (typeof found !== 'string') return false;
  const normal = (text: string) => {
    let out = text.normalize('NFC').replace(/&(?:amp|lt|gt|quot|#39);/g, (m) => ENTITIES[m] ?? m);
    if (options.schemeless) out = out.replace(/\bhttps?:\/\//gi, '');
    return out.replace(/\s+/g, ' ').trim();
  };
  return normal(sent) === normal(found);
}

/** A link X returns in `entities.urls` (with `tweet.fields=entities`). */
export interface TXUrlEntity {
  url?: string;
  expanded_url?: string;
  media_key?: string;
}

/**
 * A post's text as it was typed: X rewrites every link to a t.co address and names the target in
 * `entities.urls[].expanded_url`; the t.co link X appends for attached media (an entity with a
 * `media_key`, or whose target is the post's own /photo/ or /video/ page) is dropped.
 * https://docs.x.com/x-api/fundamentals/data-dictionary (Post `entities.urls`)
 */
export function expandXLinks(text: string | undefined, urls: readonly TXUrlEntity[] | undefined): string {
  let out = text ?? '';
  for (const entity of (urls ?? []).slice(0, 50)) {
    if (!entity.url) continue;
    const media = entity.media_key !== undefined || /\/(?:photo|video)\/\d+$/.test(entity.expanded_url ?? '');
    out = out.split(entity.url).join(media ? '' : (entity.expanded_url ?? entity.url));
  }
  return out;
}

/**
 * A Slack message's text as it was typed: Slack stores a link as `<target>` or `<target|label>` (a link
 * typed without a scheme becomes `<http://example.com|example.com>`), and the label is what was typed.
 * Mentions and channel links (`<@U…>`, `<#C…>`, `<!here>`) are not links and stay as they are.
 * https://docs.slack.dev/messaging/formatting-message-text
 */
export function unwrapSlackLinks(text: string | undefined): string {
  return (text ?? '').replace(
    /<([a-z][a-z0-9+.-]*:[^<>|\s]*)(?:\|([^<>]*))?>/gi,
    (_m, target: string, label?: string) => (label === undefined || label === '' ? target : label),
  );
}

/**
 * The first candidate whose remote id the service has not already recorded for another segment (of this
 * post or another): two posts with the same text are never taken for each other.
 */
export async function firstUnclaimed<T>(
  probe: TPublishedProbe,
  candidates: readonly T[],
  idOf: (candidate: T) => string | undefined,
): Promise<T | undefined> {
  const ids = candidates.map(idOf).filter((id): id is string => typeof id === 'string' && id !== '');
  if (ids.length === 0) return undefined;
  const claimed = probe.claimed ? await probe.claimed(ids) : new Set<string>();
  return candidates.find((c) => {
    const id = idOf(c);
    return id !== undefined && id !== '' && !claimed.has(id);
  });
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
