import type { TPostRecord } from '@sps/core';
import type { TLoadedPost } from '@sps/db';
import { JOBS, type TQueues } from '@sps/queue';
import type { Job } from 'bullmq';
import type { TPublisherContext } from './context.js';
import { beginPrepared, type TPreparedPost } from './prepared-start.js';
import { publishEnqueuer } from './publish-enqueuer.js';
import type { TPublishLanes } from './publish-lanes.js';
import { createPublishSlots } from './publish-slots.js';

export type { TPreparedPost } from './prepared-start.js';

/**
 * Prepared posts started at the same second are published by this process directly, this many at once
 * (the rest wait their turn); a publish job would add two Redis scripts and a re-read per post.
 */
export const PREPARED_PUBLISH_CONCURRENCY = 200;
/** Due posts started together: one chunk's version checks and starts are a few statements of 100 posts. */
const START_CHUNK = 500;
/** Below this stuck threshold the reconciler could take a live in-process publish for a lost one. */
const MIN_STUCK_AFTER_FOR_DIRECT_MS = 10_000;

export interface TPreparedPosts {
  /** False once the process is stopping: the post is then left to its schedule job. */
  add(prepared: TPreparedPost): boolean;
  /** How many posts wait for their due time here. */
  size(): number;
  /** Stops the timers; answers the posts that were not started (their backstop must fire on time). */
  close(): Promise<TPreparedPost[]>;
}

/** The publish job's processor and the delay of the job that takes over when it asks for a retry. */
export interface TPublishRunner {
  run(job: Job, preloaded?: TLoadedPost): Promise<unknown>;
  retryDelay(error: unknown): number;
}

export function createPreparedPosts(
  ctx: Omit<TPublisherContext, 'prepared'>,
  runner: TPublishRunner,
  /**
   * The network lanes of this pool (made with `wait: true`, of PREPARED_PUBLISH_CONCURRENCY). When they
   * apply they are the slots: a post waits in its network's FIFO, holding nothing, so a burst of one network
   * waiting for places never queues ahead of another network's post (the share still applies); the
   * runner's processPublish takes the places. Without them, the plain FIFO of slots below.
   */
  lanes?: TPublishLanes,
): TPreparedPosts {
  const byPost = new Map<string, TPreparedPost>();
  const timers = new Map<number, NodeJS.Timeout>();
  const inFlight = new Set<Promise<unknown>>();
  const enqueue = publishEnqueuer(ctx.queues);
  const full = ctx as TPublisherContext;
  let closed = false;

  const plain = createPublishSlots(PREPARED_PUBLISH_CONCURRENCY, START_CHUNK);
  const laned = lanes?.enabled ? lanes : undefined;
  const slots = {
    run: <T>(work: () => Promise<T>) => (laned ? work() : plain.run(work)),
    room: () => (laned ? laned.room(START_CHUNK) : plain.room()),
  };
  function track(work: Promise<unknown>) {
    const tracked = work.finally(() => inFlight.delete(tracked));
    inFlight.add(tracked);
  }

  /**
   * The publish job's processor, run here without the job: the same re-read, write-ahead, results and
   * finalize. A network that asks for a retry gets the ordinary publish job, delayed as its backoff says.
   * While it runs the post is touched, so the reconciler never takes it for one whose job was lost.
   */
  async function publishHere(postId: string, attempt: number, preloaded?: TLoadedPost): Promise<void> {
    const payload = JOBS.publish.payload.parse({ postId, attempt });
    const job = {
      id: `prepared-${postId}-${attempt}`,
      data: payload,
      attemptsMade: 0,
      opts: { attempts: JOBS.publish.options.attempts },
      timestamp: Date.now(),
    } as unknown as Job;
    await slots.run(async () => {
      const heartbeat = setInterval(
        () => void ctx.publishing.touch(postId).catch(() => undefined),
        ctx.options.stuckAfterMs / 3,
      );
      try {
        await runner.run(job, preloaded);
      } catch (error) {
        await ctx.queues.publish.add('publish', payload, {
          ...JOBS.publish.options,
          jobId: JOBS.publish.jobId(payload),
          delay: runner.retryDelay(error),
        });
      } finally {
        clearInterval(heartbeat);
      }
    });
  }

  async function start(prepared: TPreparedPost): Promise<string> {
    const started = await beginPrepared(full, prepared);
    if (started.kind !== 'started') return started.result;
    const { post } = prepared;
    // Should this process die (or Redis fail) from here on, the post is `publishing` without a job: the
    // reconciler's stuck check gives it one (as after a schedule job's enqueue fails after its start).
    if (ctx.options.stuckAfterMs < MIN_STUCK_AFTER_FOR_DIRECT_MS) await enqueue(post.id, started.attempt);
    else
      track(
        publishHere(post.id, started.attempt, startedAsLoaded(prepared, started.post)).catch(
          (error: unknown) =>
            // The publish job could not be added either: the reconciler's stuck check will.
            ctx.logger.warn({ postId: post.id, err: (error as Error).message }, 'prepared publish failed'),
        ),
      );
    return 'started';
  }

  function fire(dueAt: number) {
    timers.delete(dueAt);
    const wait = dueAt - Date.now();
    // A timer may fire a millisecond early: a post never goes out before its time.
    if (wait > 0) return arm(dueAt, wait);
    const due = [...byPost.values()].filter((p) => p.dueAt === dueAt);
    for (const p of due) byPost.delete(p.post.id);
    // In chunks, so that the first posts go out while later ones are still being started, and posts
    // started but not yet publishing stay few (each chunk is five statements of 100 posts).
    track(
      (async () => {
        for (let i = 0; i < due.length; i += START_CHUNK) {
          await slots.room();
          if (closed) {
            // Stopping: the rest go back to their schedule jobs, which fire at once.
            for (const left of due.slice(i))
              await restoreBackstop(ctx.queues, left.post.id, left.dueAt).catch(() => undefined);
            return;
          }
          await Promise.all(
            due.slice(i, i + START_CHUNK).map((prepared) =>
              start(prepared).catch(async (error: unknown) => {
                ctx.logger.warn(
                  { postId: prepared.post.id, err: (error as Error).message },
                  'prepared start failed; the schedule job will start the post',
                );
                await restoreBackstop(ctx.queues, prepared.post.id, prepared.dueAt).catch(() => undefined);
              }),
            ),
          );
        }
      })(),
    );
  }

  function arm(dueAt: number, wait: number) {
    const timer = setTimeout(() => fire(dueAt), Math.min(wait, 2 ** 31 - 1));
    timers.set(dueAt, timer);
  }

  return {
    add(prepared) {
      if (closed) return false;
      byPost.set(prepared.post.id, prepared);
      if (!timers.has(prepared.dueAt)) arm(prepared.dueAt, Math.max(0, prepared.dueAt - Date.now()));
      return true;
    },
    size: () => byPost.size,
    async close() {
      closed = true;
      // Posts waiting for a lane give up now: each is handed to a delayed publish job (publishHere).
      lanes?.close();
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
      // Publishes started meanwhile are tracked too: wait until none is left.
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
      const left = [...byPost.values()];
      byPost.clear();
      return left;
    },
  };
}

/**
 * The started post as the publish processor would read it, built from what the start statement answered
 * and the accounts whose versions were just checked; only for a post with no segment rows (nothing was
 * sent before), whose start left none either. Otherwise the processor reads it.
 */
function startedAsLoaded(prepared: TPreparedPost, started: TPostRecord): TLoadedPost | undefined {
  if (prepared.segmentCount > 0) return undefined;
  const ids = new Set(Object.values(prepared.accounts));
  return {
    post: started,
    deletedAt: null,
    targetAccounts: prepared.accounts,
    accounts: prepared.accountRows.filter((a) => ids.has(a.id)),
    segments: [],
  };
}

/**
 * Brings a post's backstop schedule job forward to its due time (at once when that has passed): the post
 * was not prepared after all, or this process stops before starting it.
 */
export async function restoreBackstop(queues: TQueues, postId: string, dueAt: number): Promise<void> {
  const job = await queues.schedule.getJob(JOBS.schedule.jobId({ postId, dueAt }));
  if (!job || !(await job.isDelayed())) return;
  const wait = dueAt - Date.now();
  if (wait > 0) await job.changeDelay(wait);
  else await job.promote();
}
