import { countTextParsing, type TPlatform, takeLargestParsed, textParserStats } from '@sps/core';
import { registerQueueGauge, registerTextParserMetrics } from '@sps/ops';
import type { TQueues } from '@sps/queue';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { TLaneSnapshot } from './publish-lanes.js';

/** How one network's publish of a post ended. */
export type TPublishOutcome = 'success' | 'failed' | 'unknown';
/** The network failure behind an outcome; `none` for a success or an outcome with no network failure. */
/** `processing`: a check that found the network still processing media (a wait, counted with the retries). */
export type TPublishFailureKind =
  | 'auth_expired'
  | 'rate_limited'
  | 'rejected'
  | 'transient'
  | 'processing'
  | 'none';
/** How an outcome was learned: `readback` when a lost answer was replaced by reading the network back. */
export type TPublishResolution = 'none' | 'readback';
/** What reading a network back answered (`retry_later`: a failed read or a network still settling). */
export type TReadbackResult = 'found' | 'absent' | 'cannot_tell' | 'retry_later';

/** What the processors record; a no-op in tests that do not look (see `noopPublisherMetrics`). */
export interface TPublisherMetrics {
  /** A network's final result for one publish attempt of a post. */
  publishOutcome(
    platform: TPlatform,
    outcome: TPublishOutcome,
    kind: string | null | undefined,
    resolution?: TPublishResolution,
  ): void;
  /** A network accepted the post `seconds` after it came due (scheduled time, else the publish request). */
  publishLatency(platform: TPlatform, seconds: number): void;
  /** A network failed in a way the job retries later (rate limit, transient error). */
  publishRetry(platform: TPlatform, kind: string | null | undefined): void;
  /** One question to a network about a segment whose answer was lost, by what it answered. */
  readback(platform: TPlatform, result: TReadbackResult): void;
  /** A slot pool's fair lanes, read at scrape time (`worker`: the publish jobs; `prepared`: due posts). */
  watchLanes?(pool: TLanePool, read: () => TLaneSnapshot): void;
}

/** The publisher's two slot pools with lanes. */
export type TLanePool = 'worker' | 'prepared';

export const noopPublisherMetrics: TPublisherMetrics = {
  publishOutcome() {},
  publishLatency() {},
  publishRetry() {},
  readback() {},
};

const KINDS: ReadonlySet<string> = new Set([
  'auth_expired',
  'rate_limited',
  'rejected',
  'transient',
  'processing',
]);

/** A stored `errorKind` as a bounded label value: anything else (unknown, null) is `none`. */
export function failureKindLabel(kind: string | null | undefined): TPublishFailureKind {
  return kind && KINDS.has(kind) ? (kind as TPublishFailureKind) : 'none';
}

export interface TPublisherMetricsRegistry extends TPublisherMetrics {
  registry: Registry;
}

/** The publisher process's Prometheus registry: publish outcomes and latency, queue depth, Node defaults. */
export function createPublisherMetrics(queues: TQueues): TPublisherMetricsRegistry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const outcomes = new Counter({
    name: 'publish_outcomes_total',
    help: 'Final result of publishing a post to one network, by network, outcome, kind of failure and resolution (readback: a lost answer replaced by reading the network back)',
    labelNames: ['platform', 'outcome', 'kind', 'resolution'] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'publish_latency_seconds',
    help: 'Seconds from a post coming due (its scheduled time, else the publish request) to a network accepting it',
    labelNames: ['platform'] as const,
    buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600],
    registers: [registry],
  });
  const retries = new Counter({
    name: 'publish_retries_total',
    help: 'Network failures the publish job retries later, by network and kind',
    labelNames: ['platform', 'kind'] as const,
    registers: [registry],
  });
  const readbacks = new Counter({
    name: 'publish_readbacks_total',
    help: 'Questions to a network about a segment whose answer was lost, by network and answer',
    labelNames: ['platform', 'result'] as const,
    registers: [registry],
  });
  registerQueueGauge(registry, queues, ['publish', 'schedule', 'queue-slot']);
  // Lanes are read at scrape time: nothing is counted on the publish path.
  const lanePools = new Map<TLanePool, () => TLaneSnapshot>();
  new Gauge({
    name: 'publish_lane_running',
    help: 'Publishes holding a place in their network lane, by slot pool (worker: publish jobs; prepared: due posts started in memory) and network',
    labelNames: ['pool', 'platform'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [pool, read] of lanePools)
        for (const [platform, count] of Object.entries(read().running))
          this.set({ pool, platform }, count ?? 0);
    },
  });
  new Gauge({
    name: 'publish_lane_waiting',
    help: 'Posts waiting in memory for a network or account place, by slot pool',
    labelNames: ['pool'] as const,
    registers: [registry],
    collect() {
      for (const [pool, read] of lanePools) this.set({ pool }, read().waiting);
    },
  });
  new Gauge({
    name: 'publish_lane_network_limit',
    help: 'Places one network may hold in a slot pool before it borrows idle slots (PUBLISH_NETWORK_SHARE of the pool)',
    labelNames: ['pool'] as const,
    registers: [registry],
    collect() {
      for (const [pool, read] of lanePools) this.set({ pool }, read().networkLimit);
    },
  });
  // Due posts' texts are measured here too (publish checks): their parser work is shown like the API's.
  countTextParsing();
  registerTextParserMetrics(registry, { stats: textParserStats, takeLargest: takeLargestParsed });
  return {
    registry,
    publishOutcome(platform, outcome, kind, resolution = 'none') {
      outcomes.inc({
        platform,
        outcome,
        kind: outcome === 'success' ? 'none' : failureKindLabel(kind),
        resolution,
      });
    },
    publishLatency(platform, seconds) {
      latency.observe({ platform }, Math.max(0, seconds));
    },
    publishRetry(platform, kind) {
      retries.inc({ platform, kind: failureKindLabel(kind) });
    },
    readback(platform, result) {
      readbacks.inc({ platform, result });
    },
    watchLanes(pool, read) {
      lanePools.set(pool, read);
    },
  };
}
