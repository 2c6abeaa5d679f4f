import { describe, expect, it } from '@jest/globals';
import type { Job } from 'bullmq';
import { createDeferredJobs } from '../src/deferred-jobs.js';

// The publish jobs a process turned back for a full lane: woken oldest first, one per freed place.

/** A job as far as the registry looks at it; `promote` records the order, or fails as BullMQ does. */
function fakeJob(id: string, timestamp: number, promoted: string[], fails = false): Job {
  return {
    id,
    timestamp,
    async promote() {
      if (fails) throw new Error(`Job ${id} is not in the delayed state. promote`);
      promoted.push(id);
    },
  } as unknown as Job;
}

const settle = () => new Promise((r) => setImmediate(r));

describe('deferred publish jobs', () => {
  it('promotes the oldest job of the freed network, one per place, whatever order they were turned back in', async () => {
    const promoted: string[] = [];
    const deferred = createDeferredJobs();
    // Turned back in another order than they were made (a later job's lane check came first).
    deferred.add(fakeJob('c', 3_000, promoted), ['mastodon']);
    deferred.add(fakeJob('a', 1_000, promoted), ['mastodon']);
    deferred.add(fakeJob('x', 500, promoted), ['twitter']);
    deferred.add(fakeJob('b', 2_000, promoted), ['mastodon', 'twitter']);
    expect(deferred.size()).toBe(4);

    deferred.wake('mastodon');
    await settle();
    expect(promoted).toEqual(['a']);
    deferred.wake('mastodon');
    await settle();
    expect(promoted).toEqual(['a', 'b']);
    // `b` waited for both networks: promoted once, gone from twitter's list too.
    deferred.wake('twitter');
    deferred.wake('twitter');
    await settle();
    expect(promoted).toEqual(['a', 'b', 'x']);
    expect(deferred.size()).toBe(1);
    deferred.wake('bluesky');
    await settle();
    expect(promoted).toEqual(['a', 'b', 'x']);
  });

  it('skips a job that runs again on its own, and one no longer delayed, for the next', async () => {
    const promoted: string[] = [];
    const errors: string[] = [];
    const deferred = createDeferredJobs((error) => errors.push(error.message));
    deferred.add(fakeJob('back-by-delay', 1, promoted), ['twitter']);
    deferred.add(fakeJob('not-delayed', 2, promoted, true), ['twitter']);
    deferred.add(fakeJob('next', 3, promoted), ['twitter']);
    deferred.add(fakeJob('last', 4, promoted), ['twitter']);
    deferred.forget('back-by-delay');
    deferred.wake('twitter');
    await settle();
    expect(promoted).toEqual(['next']);
    expect(errors).toEqual(['Job not-delayed is not in the delayed state. promote']);
    expect(deferred.size()).toBe(1);
  });

  it('keeps a job turned back again in its place (by when it was made), once', async () => {
    const promoted: string[] = [];
    const deferred = createDeferredJobs();
    const old = fakeJob('old', 1, promoted);
    deferred.add(old, ['twitter']);
    deferred.add(fakeJob('new', 2, promoted), ['twitter']);
    // Promoted, ran, found the lane full again: turned back once more.
    deferred.wake('twitter');
    await settle();
    deferred.forget('old');
    deferred.add(old, ['twitter']);
    deferred.wake('twitter');
    deferred.wake('twitter');
    deferred.wake('twitter');
    await settle();
    expect(promoted).toEqual(['old', 'old', 'new']);
    expect(deferred.size()).toBe(0);
  });

  it('tracks at most its bound (the rest come back by their delay) and drops forgotten entries', async () => {
    const promoted: string[] = [];
    const deferred = createDeferredJobs(undefined, 3);
    for (let i = 0; i < 5; i += 1) deferred.add(fakeJob(`j${i}`, i, promoted), ['twitter']);
    expect(deferred.size()).toBe(3);
    for (let i = 0; i < 3; i += 1) deferred.forget(`j${i}`);
    expect(deferred.size()).toBe(0);
    // Hundreds of jobs turned back and forgotten (back by their delay) on a network never woken.
    for (let i = 0; i < 1_000; i += 1) {
      deferred.add(fakeJob(`k${i}`, 10 + i, promoted), ['mastodon']);
      deferred.forget(`k${i}`);
    }
    deferred.add(fakeJob('kept', 5_000, promoted), ['mastodon']);
    deferred.wake('mastodon');
    await settle();
    expect(promoted).toEqual(['kept']);
  });
});
