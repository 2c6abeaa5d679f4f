import type { TNetworkConnector, TPublishInput, TPublishOutcome, TPublishProgress } from './connector.js';

/** The progress key this wrapper owns: when the segment started waiting for the spool budget. */
const SPOOL_WAIT_KEY = 'spoolWaitSince';

/**
 * How long a segment waits for room in the spool budget without spending attempts; past it, the full budget
 * is a plain transient failure again (retried with backoff, attempts counted), so a wait is never endless.
 */
export const SPOOL_MAX_WAIT_MS = 60 * 60_000;

/**
 * Turns "the spool budget is full" (`TNetworkFailure.spoolFull`: nothing was sent) into a `pending` answer
 * for callers that keep progress, so the publisher frees the slot and calls again after `retryAfterMs`
 * without spending an attempt (DESIGN invariant 10), as for media processing. The publisher marks the
 * segment `sending` before each call; a pending segment with no saved progress would be taken for an
 * unanswered send (read-back first), so the wait's start is saved as progress, and taken out again before
 * the connector sees it (the connector's own progress, when it has any, is left as it is).
 */
export function withSpoolWait(connector: TNetworkConnector): TNetworkConnector {
  const publish = connector.publish.bind(connector);
  connector.publish = async (input: TPublishInput): Promise<TPublishOutcome> => {
    const progress = input.progress;
    if (!progress) return publish(input);
    const saved = progress.saved;
    const waiting = saved !== null && Object.keys(saved).length === 1 && SPOOL_WAIT_KEY in saved;
    let since = Date.now();
    if (waiting) {
      since = Number(saved[SPOOL_WAIT_KEY]);
      // Cleared before the call: if it sends and its answer is lost, the publisher must see no progress
      // (and read back) rather than this marker.
      await progress.save(null);
    }
    let kept = waiting ? null : saved;
    const forConnector: TPublishProgress = {
      saved: kept,
      save: async (state) => {
        await progress.save(state);
        kept = state;
      },
    };
    const outcome = await publish({ ...input, progress: forConnector });
    if (outcome.ok || !outcome.failure.spoolFull || outcome.pending) return outcome;
    const left = (Number.isFinite(since) ? since : 0) + SPOOL_MAX_WAIT_MS - Date.now();
    // Waited long enough: ordinary retries (attempts counted) from here.
    if (left <= 0) return outcome;
    // A connector's own saved progress (a resumed upload session) is kept; else the marker is saved.
    if (kept === null) await progress.save({ [SPOOL_WAIT_KEY]: String(since) });
    const checkAfterMs = Math.max(1, Math.min(outcome.failure.retryAfterMs ?? 30_000, left));
    return { ...outcome, pending: { checkAfterMs } };
  };
  return connector;
}
