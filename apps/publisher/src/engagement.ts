import { METRIC_FIELDS, type TPlatform, UNREADABLE_METRICS } from '@sps/core';
import {
  createMetricsRepository,
  type TMetricsRepository,
  type TMetricTarget,
  type TSnapshotInput,
} from '@sps/db';
import type { TMetricsRead, TNetworkFailure } from '@sps/networks';
import type { TPublisherContext } from './context.js';
import { connectorAccount } from './credentials.js';
import type { TReadBudget } from './metrics-budget.js';
import { failureAfterRenewal } from './renewal-failure.js';

/** A read the network refused for a while (rate limit, outage): the job is retried, what was read is kept. */
export class ReadLaterError extends Error {
  constructor(readonly failure: TNetworkFailure) {
    super(failure.message);
    this.name = 'ReadLaterError';
  }
}

/**
 * The network's read budget is spent for this window: the job is moved to delayed until it turns (no
 * worker slot held, no attempt counted), with what was read kept.
 */
export class ReadBudgetSpentError extends Error {
  constructor(readonly waitMs: number) {
    super(`the read budget is spent; reading again in ${waitMs} ms`);
    this.name = 'ReadBudgetSpentError';
  }
}

/**
 * Each publisher context's notice that snapshots were stored (set by publisher.ts: the dashboard's live
 * stream refreshes the figures it shows); none: nobody is told.
 */
export const collectionNotices = new WeakMap<object, (rows: readonly TSnapshotInput[]) => void>();

/** Each publisher context's read budget (set by publisher.ts); none: reads are not capped. */
export const readBudgets = new WeakMap<object, TReadBudget>();

const repos = new WeakMap<object, TMetricsRepository>();
export function metricsRepoOf(ctx: TPublisherContext): TMetricsRepository {
  let repo = repos.get(ctx.db);
  if (!repo) {
    repo = createMetricsRepository(ctx.db);
    repos.set(ctx.db, repo);
  }
  return repo;
}

const errorRows = (targets: TMetricTarget[], error: string): TSnapshotInput[] =>
  targets.map((t) => ({
    accountId: t.accountId,
    postId: t.postId,
    platform: t.platform,
    figures: null,
    error,
  }));

export interface TCollectResult {
  read: number;
  calls: number;
}

/**
 * Reads the figures of `targets` (all of one connected account), a batch of the network's size per call,
 * and stores one snapshot per post: its figures, or the reason it could not be read (shown by the API). A
 * rate limit or outage stops the run with ReadLaterError after storing what was read, so a retry goes on
 * where it stopped; an expired token gets one refresh and one more try, as a publish does. Each call
 * first takes its share of the network's read budget (metrics-budget.ts; on a network-wide budget, within the
 * tenant's share); a spent budget stops the run
 * with ReadBudgetSpentError, what was read kept.
 */
export async function collectTargets(
  ctx: TPublisherContext,
  socialAccountId: string,
  targets: TMetricTarget[],
): Promise<TCollectResult> {
  const stored = metricsRepoOf(ctx);
  // Every stored snapshot (figures or an error) is news for a dashboard showing the post.
  const repo = {
    record: async (rows: TSnapshotInput[]) => {
      await stored.record(rows);
      collectionNotices.get(ctx)?.(rows);
    },
    readAccount: (id: string) => stored.readAccount(id),
  };
  const result = { read: 0, calls: 0 };
  if (targets.length === 0) return result;
  const platform = targets[0]?.platform as TPlatform;
  // One connected account's posts all belong to its owner: the tenant whose share of a network-wide budget they draw.
  const tenantId = targets[0]?.accountId ?? '';
  const unreadable = UNREADABLE_METRICS[platform];
  if (unreadable) {
    await repo.record(errorRows(targets, unreadable));
    return result;
  }
  const connector = ctx.connectors[platform];
  if (!connector?.readMetrics || !connector.metricsBatchSize) {
    await repo.record(
      errorRows(targets, `Reading figures from ${platform} is not supported by this service yet.`),
    );
    return result;
  }
  const account = await repo.readAccount(socialAccountId);
  if (!account?.isActive) {
    await repo.record(
      errorRows(targets, `The ${platform} account is disconnected. Reconnect it to read the post's figures.`),
    );
    return result;
  }
  let loaded = connectorAccount(account, ctx.options.encryptionKey);
  const size = connector.metricsBatchSize;
  const budget = readBudgets.get(ctx);
  const take = async () => {
    const taken = budget ? await budget.take(platform, socialAccountId, tenantId) : ({ ok: true } as const);
    if (!taken.ok) throw new ReadBudgetSpentError(taken.waitMs);
  };
  for (let i = 0; i < targets.length; i += size) {
    const batch = targets.slice(i, i + size);
    const refs = batch.map((t) => ({
      remoteId: t.remotePostId,
      meta: t.remoteMeta,
      publishedAt: t.publishedAt,
    }));
    await take();
    result.calls += 1;
    let outcome = await connector.readMetrics(loaded, refs);
    if (!outcome.ok && outcome.failure.kind === 'auth_expired') {
      const renewed = await ctx.tokens.afterUnauthorized(account.id, loaded.token);
      if (renewed?.ok) {
        loaded = { ...loaded, token: renewed.token };
        await take();
        result.calls += 1;
        outcome = await connector.readMetrics(loaded, refs);
      } else outcome = { ok: false, failure: failureAfterRenewal(outcome.failure, renewed) };
    }
    if (!outcome.ok) {
      const { failure } = outcome;
      if (failure.kind === 'rate_limited' || failure.kind === 'transient') throw new ReadLaterError(failure);
      // Permanent for now (token, permission, refusal): shown per post until a later collection succeeds.
      await repo.record(errorRows(batch, failure.message));
      continue;
    }
    const rows: TSnapshotInput[] = batch.map((t) => {
      const read: TMetricsRead = outcome.results.get(t.remotePostId) ?? {
        error: `${platform} did not return this post's figures.`,
      };
      return 'figures' in read
        ? { accountId: t.accountId, postId: t.postId, platform, figures: read.figures, error: null }
        : { accountId: t.accountId, postId: t.postId, platform, figures: null, error: read.error };
    });
    await repo.record(rows);
    result.read += rows.filter((r) => r.figures && METRIC_FIELDS.some((f) => r.figures?.[f] !== null)).length;
  }
  return result;
}
