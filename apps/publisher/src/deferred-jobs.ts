import type { TPlatform } from '@sps/core';
import type { Job } from 'bullmq';

/**
 * Publish jobs this process moved back to delayed because a network's lane was full (LaneFullError). When a
 * place of that network frees here, the oldest of them (by when its job was made) is promoted, so deferred
 * posts go out first come first served instead of whichever delayed job happens to come back first; their
 * own delay stays as the fallback (a job deferred by another process, or one past `maxTracked`, comes back
 * only by it). One promotion per freed place: a job that finds the lane full again is deferred again, so a
 * release can never start a chain of promotions.
 */
export interface TDeferredJobs {
  /** `job` was moved to delayed, waiting for a place of `platforms`. */
  add(job: Job, platforms: readonly TPlatform[]): void;
  /** `jobId` runs again (promoted or back by its delay): no longer waiting here. */
  forget(jobId: string | undefined): void;
  /** A place of `platform` freed: promote the oldest job waiting for it. */
  wake(platform: TPlatform): void;
  /** Jobs waiting here (tests). */
  size(): number;
}

interface TEntry {
  job: Job;
  since: number;
}

/** Tries before giving up on one wake: a job may have come back by its delay meanwhile (not delayed). */
const PROMOTE_TRIES = 3;

export function createDeferredJobs(
  onError: (error: Error) => void = () => undefined,
  maxTracked = 10_000,
): TDeferredJobs {
  const live = new Map<string, TEntry>();
  const byPlatform = new Map<TPlatform, TEntry[]>();

  /** The oldest live entry of `platform`, removed from every list (a dead one, forgotten earlier, is skipped). */
  const takeOldest = (platform: TPlatform): TEntry | undefined => {
    const list = byPlatform.get(platform);
    while (list && list.length > 0) {
      const entry = list.shift() as TEntry;
      const id = entry.job.id as string;
      if (live.get(id) === entry) {
        live.delete(id);
        return entry;
      }
    }
    return undefined;
  };

  const promote = async (platform: TPlatform) => {
    for (let tries = 0; tries < PROMOTE_TRIES; tries += 1) {
      const entry = takeOldest(platform);
      if (!entry) return;
      try {
        await entry.job.promote();
        return;
      } catch (error) {
        // No longer delayed (back by its own delay, or gone): the next one takes the place.
        onError(error as Error);
      }
    }
  };

  return {
    add(job, platforms) {
      const id = job.id;
      if (!id || platforms.length === 0) return;
      if (!live.has(id) && live.size >= maxTracked) return;
      const entry = { job, since: job.timestamp };
      live.set(id, entry);
      for (const platform of platforms) {
        let list = byPlatform.get(platform) ?? [];
        // Entries of jobs forgotten since are dropped now and then, so a list never outgrows the live jobs.
        if (list.length > 2 * live.size + 100) list = list.filter((e) => live.get(e.job.id as string) === e);
        byPlatform.set(platform, list);
        // Sorted by when the job was made (a job deferred again keeps its place); equal times keep arrival order.
        let at = list.length;
        while (at > 0 && (list[at - 1] as TEntry).since > entry.since) at -= 1;
        list.splice(at, 0, entry);
      }
    },
    forget(jobId) {
      if (jobId) live.delete(jobId);
    },
    wake(platform) {
      if (live.size === 0) return;
      void promote(platform);
    },
    size: () => live.size,
  };
}
