import { setTimeout as sleep } from 'node:timers/promises';
import type { TNetworkFailure, TProcessingWait } from './connector.js';

/** What one status check found: ready, still processing, or a failure that ends the wait. */
export type TProcessingCheck =
  | { state: 'ready' }
  | { state: 'pending' }
  | { state: 'failed'; failure: TNetworkFailure };

export interface TProcessingWaitSpec {
  /** Network name and what is waited for, for the message ("LinkedIn", "the video"). */
  network: string;
  what: string;
  /** The connector's production defaults, from the network's documentation. */
  defaults: Required<TProcessingWait>;
  /** Overrides (tests). */
  wait?: TProcessingWait | undefined;
}

/**
 * Checks until the media is ready, at most `maxWaitMs` (counted in checks, so a slow network cannot
 * stretch it into an unbounded loop). The first check is immediate; running out is transient: the
 * media may still finish, and the publisher retries later.
 */
export async function waitForProcessing(
  spec: TProcessingWaitSpec,
  check: () => Promise<TProcessingCheck>,
): Promise<{ ok: true } | { ok: false; failure: TNetworkFailure }> {
  const intervalMs = Math.max(0, spec.wait?.intervalMs ?? spec.defaults.intervalMs);
  const maxWaitMs = Math.max(0, spec.wait?.maxWaitMs ?? spec.defaults.maxWaitMs);
  const checks = 1 + (intervalMs > 0 ? Math.floor(maxWaitMs / intervalMs) : 0);
  for (let attempt = 0; attempt < checks; attempt += 1) {
    if (attempt > 0) await sleep(intervalMs);
    const found = await check();
    if (found.state === 'ready') return { ok: true };
    if (found.state === 'failed') return { ok: false, failure: found.failure };
  }
  return {
    ok: false,
    failure: {
      kind: 'transient',
      message: `${spec.network} was still processing ${spec.what} after ${Math.round(maxWaitMs / 1000)} s. It will be retried automatically.`,
    },
  };
}
