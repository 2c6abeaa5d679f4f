// When metrics are read; no imports, so context.ts can name it without a cycle through the processors.

/** How metrics are collected (METRICS_COLLECT_AFTER and its companions, parsed in env.ts). */
export interface TEngagementOptions {
  /** Durations after publishing at which a post's figures are read, ascending. */
  collectAfterMs: number[];
  /** A post whose last collection time passed longer ago than this without one is no longer read. */
  graceMs: number;
  /** Read calls one collection job makes at most; the rest is left for the next job. */
  maxCallsPerJob: number;
}

export const DEFAULT_ENGAGEMENT: TEngagementOptions = {
  collectAfterMs: [3_600_000, 6 * 3_600_000, 24 * 3_600_000, 3 * 86_400_000, 7 * 86_400_000, 30 * 86_400_000],
  graceMs: 86_400_000,
  maxCallsPerJob: 50,
};
