import { JOBS, parsePayload } from '@sps/queue';
import { DelayedError, type Job, UnrecoverableError } from 'bullmq';
import type { TPublisherContext } from './context.js';
import { collectTargets, metricsRepoOf, ReadBudgetSpentError } from './engagement.js';
import type { TEngagementOptions } from './engagement-options.js';

/** Connected accounts looked at per reconcile run; the rest wait for the next run. */
const PLAN_LIMIT = 500;
/** A failed collection is tried again by the reconciler no sooner than this after it failed. */
const FAILED_RETRY_AFTER_MS = 10 * 60_000;

/**
 * A read that found the network's read budget spent: the job goes back to delayed until the window turns,
 * so it holds no worker slot meanwhile and the wait is not counted as a failed attempt.
 */
async function delayWhenBudgetSpent<T>(
  job: Job,
  token: string | undefined,
  run: () => Promise<T>,
): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (!(error instanceof ReadBudgetSpentError) || !token) throw error;
    await job.moveToDelayed(Date.now() + Math.max(50, error.waitMs), token);
    throw new DelayedError();
  }
}

/**
 * `metrics-collect`: every due post of one connected account, read in the network's batches, at most
 * `maxCallsPerJob` calls (what is left is due still, and the reconciler gives it the next job).
 */
export async function processMetricsCollect(
  ctx: TPublisherContext,
  job: Job,
  options: TEngagementOptions,
  token?: string,
) {
  const payload = parsePayload('metricsCollect', job.data);
  if (!payload) throw new UnrecoverableError('malformed metrics-collect payload');
  const repo = metricsRepoOf(ctx);
  const batch =
    ctx.connectors[(await repo.readAccount(payload.socialAccountId))?.platform ?? 'telegram']
      ?.metricsBatchSize;
  const limit = Math.max(1, (batch ?? 1) * options.maxCallsPerJob);
  const due = await repo.dueTargets(payload.socialAccountId, options.collectAfterMs, options.graceMs, limit);
  return delayWhenBudgetSpent(job, token, () => collectTargets(ctx, payload.socialAccountId, due));
}

/** `metrics-refresh` (POST /v1/posts/{id}/metrics/refresh): every network of one post, now. */
export async function processMetricsRefresh(ctx: TPublisherContext, job: Job, token?: string) {
  const payload = parsePayload('metricsRefresh', job.data);
  if (!payload) throw new UnrecoverableError('malformed metrics-refresh payload');
  const targets = await metricsRepoOf(ctx).targetsOfPost(payload.postId);
  const byAccount = new Map<string, typeof targets>();
  for (const t of targets) byAccount.set(t.socialAccountId, [...(byAccount.get(t.socialAccountId) ?? []), t]);
  const total = { read: 0, calls: 0 };
  for (const [socialAccountId, list] of byAccount) {
    // A refresh delayed by the budget reads its posts again from the start (one post: a few calls).
    const r = await delayWhenBudgetSpent(job, token, () => collectTargets(ctx, socialAccountId, list));
    total.read += r.read;
    total.calls += r.calls;
  }
  return total;
}

/**
 * Reconciler part (DESIGN invariant 1): a `metrics-collect` job for each connected account with a post whose
 * collection time has passed with no snapshot since, rebuilt from PostgreSQL; a finished job of the same id
 * (its due time unchanged because more remained, or it failed a while ago) is replaced.
 */
export async function planMetricCollections(ctx: TPublisherContext, options: TEngagementOptions) {
  const due = await metricsRepoOf(ctx).dueAccounts(options.collectAfterMs, options.graceMs, PLAN_LIMIT);
  let planned = 0;
  for (const d of due) {
    const payload = { socialAccountId: d.socialAccountId, dueAt: d.dueAt.getTime() };
    const jobId = JOBS.metricsCollect.jobId(payload);
    const existing = await ctx.queues.metrics.getJob(jobId);
    if (existing) {
      const state = await existing.getState();
      const stale =
        state === 'completed' ||
        (state === 'failed' && Date.now() - (existing.finishedOn ?? 0) > FAILED_RETRY_AFTER_MS);
      if (!stale) continue;
      await existing.remove().catch(() => undefined);
    }
    await ctx.queues.metrics.add('metrics-collect', payload, { ...JOBS.metricsCollect.options, jobId });
    planned += 1;
  }
  return planned;
}
