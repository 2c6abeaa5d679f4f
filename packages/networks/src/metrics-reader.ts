import { emptyFigures, type TMetricFigures } from '@sps/core';
import type { TConnectorAccount, TNetworkFailure } from './connector.js';
import { classifyHttpError, type TClassifyHints } from './http-client.js';

// Reading the engagement figures of published posts. Each network's reader lives in its own file
// (`<network>-metrics.ts`) and is attached to the network's connector as `readMetrics` by the registry.

/** A published post to read: its remote id, the extra ids some networks need, and when it was published. */
export interface TMetricsRef {
  remoteId: string;
  meta?: Record<string, string> | null;
  publishedAt: Date;
}

/** One post's figures, or why they could not be read (gone, not readable with this token). */
export type TMetricsRead = { figures: TMetricFigures } | { error: string };

/**
 * A read of a batch: per remote id its figures or its own error; or a failure of the whole call
 * (`auth_expired` and a missing permission: reconnect; `rate_limited`: later, with the network's delay).
 */
export type TMetricsOutcome =
  | { ok: true; results: Map<string, TMetricsRead> }
  | { ok: false; failure: TNetworkFailure };

export interface TMetricsReader {
  /** Posts one call reads at most (the network's batch size; 1 where it reads one post per call). */
  readonly metricsBatchSize: number;
  /** Reads up to `metricsBatchSize` posts of one account. */
  readMetrics(account: TConnectorAccount, refs: TMetricsRef[]): Promise<TMetricsOutcome>;
}

export function figures(values: Partial<TMetricFigures>): TMetricFigures {
  const out = emptyFigures();
  for (const [key, value] of Object.entries(values) as [keyof TMetricFigures, unknown][]) {
    if (typeof value === 'number' && Number.isFinite(value) && value >= 0) out[key] = Math.trunc(value);
  }
  return out;
}

/**
 * A failed read call. A 403 means the token lacks the permission the read needs (never retried as if
 * transient): the message names it and says to reconnect.
 */
export function readFailureOf(error: unknown, hints: TClassifyHints, permission: string): TNetworkFailure {
  const failure = classifyHttpError(error, hints);
  if (failure.kind === 'rejected' && failure.status === 403) {
    return {
      ...failure,
      message: `${hints.network} refused to read the post's figures: the connection lacks the "${permission}" permission. Reconnect the ${hints.network} account to grant it.`,
    };
  }
  if (failure.kind === 'rejected') {
    return {
      ...failure,
      message: `${hints.network} refused to read the post's figures (HTTP ${failure.status}): ${failure.body ?? ''}`,
    };
  }
  if (failure.kind === 'auth_expired') {
    return {
      ...failure,
      message: `${hints.network} rejected the account's token. Reconnect the ${hints.network} account.`,
    };
  }
  return failure;
}

export const GONE = (network: string) =>
  `The post is no longer on ${network} (deleted or hidden); there are no figures to read.`;
