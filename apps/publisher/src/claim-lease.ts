import type { TPlatform } from '@sps/core';
import type { TPublisherContext } from './context.js';

// The write-ahead claim's lease (segment_deliveries.claimed_until). The run that claimed a segment renews
// it while its connector call runs, so a twin run of the same job (a stalled job handed to another worker
// while the first still works) that finds the row `sending` waits for it instead of reading the network
// back mid-send and taking "absent" for an answer. A killed process's lease lapses on its own.

export interface TClaimLease {
  /** How long a claim (or its last renewal) holds. */
  leaseMs: number;
  /** How often a running call renews it: a call shorter than this costs no statement beyond the claim. */
  renewEveryMs: number;
}

/**
 * From NETWORK_TIMEOUT: a renewal every half timeout, a lease of two timeouts (four periods). The lease
 * outlives one network call even with no renewal, so a live run keeps it through an event loop stalled
 * for up to 1.5 timeouts; a killed run's lease is gone at most two timeouts after its last renewal.
 */
export function claimLeaseFor(networkTimeoutMs: number): TClaimLease {
  const renewEveryMs = Math.max(Math.round(networkTimeoutMs / 2), 50);
  return { leaseMs: 4 * renewEveryMs, renewEveryMs };
}

export interface TClaimRef {
  postId: string;
  platform: TPlatform;
  segmentIndex: number;
  /** The row's attempts count as loaded (0: no row): the claim writes one more. */
  seenAttempts: number;
}

/** The end of a lease that starts now. */
export const leaseFromNow = (ctx: TPublisherContext) => new Date(Date.now() + ctx.options.claimLease.leaseMs);

/**
 * A `sending` row another run holds: how long until its lease lapses (null: not held, act on it). A row
 * of this job's own earlier attempt is never held: every call that leaves its row `sending` gives the
 * lease back (see whileClaimed).
 */
export function heldByAnotherRun(
  existing: { status: string; claimedUntil: Date | null } | undefined,
  now = Date.now(),
): number | null {
  if (existing?.status !== 'sending' || !existing.claimedUntil) return null;
  const left = existing.claimedUntil.getTime() - now;
  return left > 0 ? left : null;
}

/**
 * Runs the connector call of a claimed segment, renewing the lease every `renewEveryMs` until it returns.
 * When the call leaves the row `sending` (`leavesSending`: an unknown outcome, a media wait) or throws,
 * the lease ends now, so the next run acts at once and its settle wait counts from here.
 */
export async function whileClaimed<T>(
  ctx: TPublisherContext,
  ref: TClaimRef,
  call: () => Promise<T>,
  leavesSending: (result: T) => boolean,
): Promise<T> {
  const { renewEveryMs } = ctx.options.claimLease;
  const attempts = ref.seenAttempts + 1;
  const extend = (until: Date) =>
    ctx.publishing.renewClaim(ref.postId, ref.platform, ref.segmentIndex, attempts, until).catch((err) => {
      // A missed renewal only shortens the lease (the next one, or the call's end, follows).
      ctx.logger.warn({ err, postId: ref.postId, platform: ref.platform }, 'claim lease renewal failed');
      return false;
    });
  let inFlight: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    inFlight = extend(leaseFromNow(ctx));
  }, renewEveryMs);
  timer.unref();
  let leaves = true;
  try {
    const result = await call();
    leaves = leavesSending(result);
    return result;
  } finally {
    clearInterval(timer);
    // A renewal still on its way must not land after the release below.
    await inFlight;
    if (leaves) await extend(new Date());
  }
}
