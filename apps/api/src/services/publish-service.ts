import {
  AppError,
  findPublishProblems,
  hasPublishProblems,
  idempotencyKeyInUse,
  publishProblemsError,
  type TAvailability,
  type TPlatform,
  type TPostRecord,
  type TPostStatus,
  type TPublishable,
} from '@sps/core';
import type {
  TIdempotencyWrite,
  TPlan,
  TPostRepository,
  TPublishRepository,
  TSocialAccountRepository,
} from '@sps/db';
import { enqueuePublish, removeSchedule, type TQueues } from '@sps/queue';
import type { Logger } from 'pino';
import { notFound } from './post-service.js';
import type { TTwitterAllowance } from './twitter-allowance.js';

export interface TPublishServiceDeps {
  posts: TPostRepository;
  publishing: TPublishRepository;
  socialAccounts: TSocialAccountRepository;
  queues: TQueues;
  logger: Logger;
  availability: Partial<Record<TPlatform, TAvailability>>;
  waitMs: number;
  /** Variant A's monthly twitter allowance; without it nothing is counted. */
  twitterAllowance?: TTwitterAllowance;
  /** Told when a publish or retry started (the post is now `publishing`), for the dashboard's live updates. */
  onChange?: (accountId: string, postId: string) => void;
}

export interface TPublishStart {
  post: TPostRecord;
  attempt: number;
  /** Networks this attempt publishes to (all of them, or the failed ones on retry). */
  platforms: TPlatform[];
}

/** Variant A: a network must be available to the service (threads needs the network owner's approval). */
function unavailable(
  platforms: TPlatform[],
  availability: TPublishServiceDeps['availability'],
): AppError | null {
  const blocked = platforms.filter((p) => {
    const state = availability[p];
    return state === 'pending_approval' || state === 'disabled';
  });
  if (blocked.length === 0) return null;
  const reasons = blocked.map((p) =>
    availability[p] === 'pending_approval'
      ? `${p} is waiting for approval by the network's owner`
      : `${p} is disabled on this server`,
  );
  return new AppError(
    'network_unavailable',
    `Publishing is not available for ${blocked.join(', ')}: ${reasons.join('; ')}`,
    {
      issues: blocked.map((p) => ({
        field: 'platforms',
        message: `${p} is not available for publishing yet`,
      })),
      fix: 'Remove these networks from the post, or ask the operator to enable them (NETWORK_AVAILABILITY) once approved.',
      details: { platforms: blocked },
    },
  );
}

export function createPublishService(deps: TPublishServiceDeps) {
  const { posts, publishing, socialAccounts, queues, logger } = deps;

  async function connectedAccounts(accountId: string, platforms: TPlatform[]) {
    const list = await socialAccounts.list(accountId, { platforms });
    const byPlatform: Partial<Record<TPlatform, string>> = {};
    for (const account of list) byPlatform[account.platform] ??= account.id;
    return byPlatform;
  }

  /** The checks of a publish request, also run before creating a post with `published: true`. */
  async function check(accountId: string, post: TPublishable, variant: 'A' | 'B') {
    if (variant === 'A') {
      const blocked = unavailable(post.platforms, deps.availability);
      if (blocked) throw blocked;
    }
    const accounts = await connectedAccounts(accountId, post.platforms);
    const problems = findPublishProblems(post, new Set(Object.keys(accounts) as TPlatform[]), variant);
    if (hasPublishProblems(problems)) throw publishProblemsError(problems);
    return accounts;
  }

  async function enqueue(postId: string, attempt: number): Promise<void> {
    try {
      await enqueuePublish(queues, postId, attempt);
    } catch (err) {
      // The post is committed as `publishing`; the publisher's reconciler re-enqueues it.
      logger.warn(
        { err: (err as Error).message, postId },
        'publish job not enqueued; the reconciler will pick it up',
      );
    }
  }

  /** Variant A with a plan: reserves a twitter publish when the attempt includes twitter. */
  async function reserveTwitter(accountId: string, platforms: TPlatform[], plan: TPlan | undefined) {
    if (!plan || !deps.twitterAllowance || !platforms.includes('twitter')) return undefined;
    return deps.twitterAllowance.reserve(accountId, plan);
  }

  function giveBack(release: (() => Promise<void>) | undefined, postId: string): Promise<void> {
    if (!release) return Promise.resolve();
    // Best effort: a unit not given back only costs the account one publish of this month.
    return release().catch((err: unknown) =>
      logger.warn({ err: (err as Error).message, postId }, 'twitter allowance not given back'),
    );
  }

  return {
    check,

    /** Variant A create: 403 when the twitter allowance is used up and the post lists twitter. */
    async ensureTwitterAllowance(accountId: string, plan: TPlan, platforms: TPlatform[]): Promise<void> {
      if (deps.twitterAllowance && platforms.includes('twitter'))
        await deps.twitterAllowance.ensureAvailable(accountId, plan);
    },

    /**
     * Starts publishing from the given statuses; answers at once (the publisher does the rest). With a
     * `plan` (Variant A) a twitter publish is counted against the monthly allowance once it passed every check.
     */
    async start(
      accountId: string,
      id: string,
      from: TPostStatus[],
      variant: 'A' | 'B',
      plan?: TPlan,
      /** Under an Idempotency-Key: the key records the post and attempt in the statement that starts it. */
      idempotency?: TIdempotencyWrite,
    ): Promise<TPublishStart> {
      let release: (() => Promise<void>) | undefined;
      try {
        for (let round = 0; round < 3; round += 1) {
          const post = await posts.find(accountId, id);
          if (!post) throw notFound(id);
          if (!from.includes(post.status)) throw notPublishable(post.status);
          const accounts = await check(accountId, post, variant);
          // After the checks, before the lock: a refused allowance leaves the post as it was.
          release ??= await reserveTwitter(accountId, post.platforms, plan);
          const outcome = await publishing.begin({
            accountId,
            postId: id,
            from,
            accounts,
            expectUpdatedAt: post.updatedAt,
            clearQueue: true,
            ...(idempotency ? { idempotency } : {}),
          });
          if (outcome.kind === 'changed') continue; // edited between the checks and the lock: check again
          if (outcome.kind === 'not_found') throw notFound(id);
          if (outcome.kind === 'not_publishable') throw notPublishable(outcome.status);
          if (outcome.kind === 'key_lost') throw idempotencyKeyInUse();
          if (outcome.kind !== 'started') throw new AppError('internal_error', 'Unexpected publish outcome');
          release = undefined; // the publish started: the unit stays used
          await enqueue(id, outcome.attempt);
          deps.onChange?.(accountId, id);
          if (post.status === 'scheduled' && post.scheduledFor) {
            await removeSchedule(queues, id, post.scheduledFor).catch(() => undefined);
          }
          return { post: outcome.post, attempt: outcome.attempt, platforms: outcome.post.platforms };
        }
        throw new AppError('conflict', 'The post kept changing while it was being published; try again');
      } catch (error) {
        await giveBack(release, id);
        throw error;
      }
    },

    /** Variant A retry: only the networks that failed (or whose outcome is unknown). */
    async retry(accountId: string, id: string, plan?: TPlan): Promise<TPublishStart> {
      const before = await posts.find(accountId, id);
      if (!before) throw notFound(id);
      const failed = before.targets
        .filter((t) => t.status === 'failed' || t.status === 'unknown')
        .map((t) => t.platform);
      const blocked = unavailable(failed, deps.availability);
      if (blocked) throw blocked;
      const release = await reserveTwitter(accountId, failed, plan);
      const outcome = await publishing.beginRetry(accountId, id).catch(async (error: unknown) => {
        await giveBack(release, id);
        throw error;
      });
      if (outcome.kind !== 'started') await giveBack(release, id);
      if (outcome.kind === 'not_found') throw notFound(id);
      if (outcome.kind === 'not_publishable') throw notPublishable(outcome.status);
      if (outcome.kind !== 'started') {
        throw new AppError('nothing_to_retry', 'Nothing failed on this post, so there is nothing to retry', {
          fix: 'Retry is for posts with networks that failed; use publish for drafts.',
        });
      }
      await enqueue(id, outcome.attempt);
      deps.onChange?.(accountId, id);
      return { post: outcome.post, attempt: outcome.attempt, platforms: failed };
    },

    /**
     * Waits (bounded) until the attempt finishes, reading PostgreSQL: the publisher may run in any
     * process. On timeout the post is returned as it is, still `publishing`.
     */
    async waitForOutcome(accountId: string, id: string, attempt: number): Promise<TPostRecord> {
      const deadline = Date.now() + deps.waitMs;
      let delay = 25;
      for (;;) {
        const post = await posts.find(accountId, id);
        if (!post) throw notFound(id);
        if (post.status !== 'publishing' || post.publishAttempt !== attempt || Date.now() >= deadline)
          return post;
        await new Promise((r) => setTimeout(r, delay));
        delay = Math.min(delay * 2, 250);
      }
    },
  };
}

function notPublishable(status: TPostStatus): AppError {
  const message =
    status === 'published'
      ? 'The post is already published'
      : status === 'publishing'
        ? 'The post is being published right now'
        : `A ${status} post cannot be published`;
  return new AppError('post_not_publishable', message, {
    fix:
      status === 'published'
        ? 'Create a new post to publish again.'
        : status === 'failed'
          ? 'Use retry for the networks that failed.'
          : 'Wait until publishing finishes.',
    details: { status },
  });
}

export type TPublishService = ReturnType<typeof createPublishService>;
