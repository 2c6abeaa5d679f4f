import { setTimeout as sleep } from 'node:timers/promises';
import type { TNetworkFailure, TProcessingWait, TPublishOutcome, TPublishProgress } from './connector.js';

/**
 * One status check per call instead of a sleep in the worker (DESIGN invariant 10): a connector whose
 * media is still processing saves where it is and answers `pending`; the publisher records the wait in
 * PostgreSQL, frees the slot and calls again later, when the connector checks once more from what it saved.
 * The wait is bounded by a durable deadline (`waitSince` in the saved progress plus `maxWaitMs`).
 */
export interface TProcessingBudget {
  network: string;
  defaults: Required<TProcessingWait>;
  wait?: TProcessingWait | undefined;
}

export type TStepResult<T> =
  | { kind: 'ready'; value: T }
  | { kind: 'failed'; failure: TNetworkFailure }
  | { kind: 'pending'; checkAfterMs: number; what: string };

/** When the wait started (saved with the progress), or now when it starts with this call. */
export function waitSince(saved: Record<string, string> | null, now = Date.now()): number {
  const since = Number(saved?.waitSince);
  return Number.isFinite(since) && since > 0 ? since : now;
}

/**
 * The answer to a check that found the media still processing: call again after the interval (never past
 * the deadline), or, once the deadline has passed, the transient failure the blocking wait gave (the
 * publisher retries the whole segment later, as before).
 */
export function stillProcessing(
  budget: TProcessingBudget,
  since: number,
  what: string,
  now = Date.now(),
): TStepResult<never> {
  const intervalMs = Math.max(1, budget.wait?.intervalMs ?? budget.defaults.intervalMs);
  const maxWaitMs = Math.max(0, budget.wait?.maxWaitMs ?? budget.defaults.maxWaitMs);
  const left = since + maxWaitMs - now;
  if (left <= 0) {
    return {
      kind: 'failed',
      failure: {
        kind: 'transient',
        message: `${budget.network} was still processing ${what} after ${Math.round(maxWaitMs / 1000)} s. It will be retried automatically.`,
      },
    };
  }
  return { kind: 'pending', checkAfterMs: Math.min(intervalMs, left), what };
}

/** The outcome of a step that is still waiting. */
export function pendingOutcome(
  network: string,
  step: { checkAfterMs: number; what: string },
): TPublishOutcome {
  return {
    ok: false,
    failure: {
      kind: 'transient',
      message: `${network} is still processing ${step.what}; checking again in ${Math.ceil(step.checkAfterMs / 1000)} s.`,
    },
    pending: { checkAfterMs: step.checkAfterMs },
  };
}

/**
 * Runs a resumable step to its end for a caller that keeps no progress (a direct connector call): the
 * progress lives in memory and the pauses are slept here, as the blocking wait did.
 */
export async function runToEnd<T>(
  progress: TPublishProgress | undefined,
  step: (progress: TPublishProgress) => Promise<TStepResult<T>>,
): Promise<TStepResult<T>> {
  if (progress) return step(progress);
  const local: TPublishProgress = {
    saved: null,
    save: async (state) => {
      local.saved = state;
    },
  };
  for (;;) {
    const result = await step(local);
    if (result.kind !== 'pending') return result;
    await sleep(result.checkAfterMs);
  }
}
