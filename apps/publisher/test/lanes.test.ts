import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TPlatform } from '@sps/core';
import { testPrefix } from '@sps/db/testing';
import type { TRunningSim } from '@sps/network-sim';
import { bullPrefix } from '@sps/queue';
import request from 'supertest';
import { bearer, connected, startTestApi, type TTestApi, testRedisFactory } from '../../api/test/harness.js';
import { createAccountLanes, createPublishLanes, type TLaneOptions } from '../src/publish-lanes.js';
import { simCounts, startPublisherProcess, type TPublisherProcess, waitUntil } from './support.js';

// Fair lanes (issue 24): a slow network holds at most its share of the slots, one account's many posts
// leave room for another's, and a killed publisher's account places lapse with their lease.
// Orderings and counts only: when the simulator received each post, never how long anything took.

const LANES: TLaneOptions = { networkShare: 0.5, accountCap: 2, leaseMs: 600, retryMs: 50, waitMs: 2_000 };

describe('lanes: the account lease in Redis', () => {
  const factory = testRedisFactory();
  const prefix = bullPrefix(testPrefix('lanes'));

  it('caps an account over every process, and a killed holder’s places lapse after the lease', async () => {
    const doomed = await connected(factory.worker());
    const other = await connected(factory.worker());
    try {
      const killed = createAccountLanes(doomed, prefix, LANES);
      const alive = createAccountLanes(other, prefix, LANES);
      expect(await killed.acquire('twitter', 'acct-1')).not.toBeNull();
      expect(await killed.acquire('twitter', 'acct-1')).not.toBeNull();
      // The cap counts the other process's places; another account has a lane of its own.
      expect(await alive.acquire('twitter', 'acct-1')).toBeNull();
      const elsewhere = await alive.acquire('twitter', 'acct-2');
      expect(elsewhere).not.toBeNull();
      await elsewhere?.release();
      // The holder dies without releasing (its renewals stop with its connection).
      doomed.disconnect();
      let place = null;
      await waitUntil(
        'the dead holder’s places to lapse',
        async () => {
          place = await alive.acquire('twitter', 'acct-1');
          return place !== null;
        },
        20_000,
        100,
      );
      expect(place).not.toBeNull();
    } finally {
      await other.quit();
    }
  });

  it('renews a live place past its lease and gives it back on release', async () => {
    const redis = await connected(factory.worker());
    try {
      const lanes = createAccountLanes(redis, prefix, LANES);
      const a = await lanes.acquire('mastodon', 'acct-3');
      const b = await lanes.acquire('mastodon', 'acct-3');
      // Several leases later the renewed places still fill the lane.
      await new Promise((r) => setTimeout(r, LANES.leaseMs * 3));
      expect(await lanes.acquire('mastodon', 'acct-3')).toBeNull();
      await a?.release();
      await a?.release();
      const c = await lanes.acquire('mastodon', 'acct-3');
      expect(c).not.toBeNull();
      await Promise.all([b?.release(), c?.release()]);
      expect(await lanes.held('mastodon', 'acct-3')).toBe(0);
    } finally {
      await redis.quit();
    }
  });

  it('holds a network to its share of the pool, in memory', async () => {
    const lanes = createPublishLanes(4, { ...LANES, accountCap: 0 }, null);
    const first = await lanes.acquire('instagram', undefined);
    const second = await lanes.acquire('instagram', undefined);
    expect(await lanes.acquire('instagram', undefined)).toBeNull();
    expect(await lanes.acquire('twitter', undefined)).not.toBeNull();
    await first?.release();
    await first?.release();
    expect(lanes.running('instagram')).toBe(1);
    expect(await lanes.acquire('instagram', undefined)).not.toBeNull();
    await second?.release();
  });

  it('lets a network borrow idle slots while a share stays free for the others', async () => {
    // 8 slots, a quarter each: 2 of its own, borrowing up to 6 while the pool is otherwise idle.
    const lanes = createPublishLanes(8, { ...LANES, networkShare: 0.25, accountCap: 0 }, null);
    const taken = [];
    for (let i = 0; i < 6; i += 1) taken.push(await lanes.acquire('twitter', undefined));
    expect(taken.every((p) => p !== null)).toBe(true);
    expect(await lanes.acquire('twitter', undefined)).toBeNull();
    // The share kept free is the other networks' own.
    expect(await lanes.acquire('mastodon', undefined)).not.toBeNull();
    expect(await lanes.acquire('mastodon', undefined)).not.toBeNull();
    expect(await lanes.acquire('mastodon', undefined)).toBeNull();
  });
});

describe('lanes: a flowing lane (the worker’s pool)', () => {
  // 4 slots, half each: two places per network. A generous retry bound, so "recent" holds on a busy box.
  const flowingLanes = (retryMs: number, onFree?: (platform: TPlatform) => void) =>
    createPublishLanes(4, { ...LANES, accountCap: 0, retryMs }, null, {
      wait: 'flowing',
      ...(onFree ? { onFree } : {}),
    });

  it('turns a job away at once while its lane has not been giving places back', async () => {
    const lanes = flowingLanes(5_000);
    const held = [await lanes.acquire('twitter', undefined), await lanes.acquire('twitter', undefined)];
    expect(held.every((p) => p !== null)).toBe(true);
    expect(await lanes.acquire('twitter', undefined)).toBeNull();
    expect(lanes.waiting()).toBe(0);
    await Promise.all(held.map((p) => p?.release()));
  });

  it('a job of a lane giving places back waits for the next one; that place promotes no turned-back job', async () => {
    const freed: TPlatform[] = [];
    const lanes = flowingLanes(5_000, (platform) => freed.push(platform));
    // Two returns give the lane a gap between them.
    for (let i = 0; i < 2; i += 1) await (await lanes.acquire('twitter', undefined))?.release();
    expect(freed).toEqual(['twitter', 'twitter']);
    const held = [await lanes.acquire('twitter', undefined), await lanes.acquire('twitter', undefined)];
    const waiter = lanes.acquire('twitter', undefined);
    await Promise.resolve();
    expect(lanes.waiting()).toBe(1);
    await held[0]?.release();
    const place = await waiter;
    expect(place).not.toBeNull();
    expect(lanes.running('twitter')).toBe(2);
    expect(freed).toEqual(['twitter', 'twitter']);
    await Promise.all([held[1]?.release(), place?.release()]);
    expect(freed).toEqual(['twitter', 'twitter', 'twitter', 'twitter']);
  });

  it('a waiting job gives up after the retry bound when no place comes back', async () => {
    const lanes = flowingLanes(1_000);
    for (let i = 0; i < 2; i += 1) await (await lanes.acquire('twitter', undefined))?.release();
    const held = [await lanes.acquire('twitter', undefined), await lanes.acquire('twitter', undefined)];
    const waiter = lanes.acquire('twitter', undefined);
    await Promise.resolve();
    expect(lanes.waiting()).toBe(1);
    expect(await waiter).toBeNull();
    expect(lanes.waiting()).toBe(0);
    expect(lanes.running('twitter')).toBe(2);
    await Promise.all(held.map((p) => p?.release()));
  });
});

describe('lanes: waiting in memory (the prepared posts’ pool)', () => {
  const factory = testRedisFactory();
  const prefix = bullPrefix(testPrefix('lanes-wait'));
  // 4 slots, half each: two places per network; a network borrows none while another runs.
  const waiting = (waitMs = 60_000) =>
    createPublishLanes(4, { ...LANES, accountCap: 0, waitMs }, null, { wait: true });

  it('wakes a full network’s waiters in arrival order as places free', async () => {
    const lanes = waiting();
    const held = [await lanes.acquire('twitter', undefined), await lanes.acquire('twitter', undefined)];
    expect(held.every((p) => p !== null)).toBe(true);
    const order: string[] = [];
    const waiters = ['a', 'b', 'c'].map((name) =>
      lanes.acquire('twitter', undefined).then((place) => {
        order.push(name);
        return place;
      }),
    );
    await Promise.resolve();
    expect(lanes.waiting()).toBe(3);
    expect(order).toEqual([]);
    await held[0]?.release();
    const a = await waiters[0];
    expect(a).not.toBeNull();
    expect(order).toEqual(['a']);
    expect(lanes.running('twitter')).toBe(2);
    await held[1]?.release();
    await a?.release();
    const [, b, c] = await Promise.all(waiters);
    expect(order).toEqual(['a', 'b', 'c']);
    expect(lanes.waiting()).toBe(0);
    await Promise.all([b?.release(), c?.release()]);
    expect(lanes.running('twitter')).toBe(0);
  });

  it('keeps the share: a waiting burst of one network never takes the places another network needs', async () => {
    // 8 slots, a quarter each: X borrows up to 6, the last 2 stay Mastodon's even while X posts wait.
    const lanes = createPublishLanes(
      8,
      { ...LANES, networkShare: 0.25, accountCap: 0, waitMs: 60_000 },
      null,
      {
        wait: true,
      },
    );
    const x = [];
    for (let i = 0; i < 6; i += 1) x.push(await lanes.acquire('twitter', undefined));
    let woken = false;
    const burst = lanes.acquire('twitter', undefined).then((place) => {
      woken = true;
      return place;
    });
    const m1 = await lanes.acquire('mastodon', undefined);
    const m2 = await lanes.acquire('mastodon', undefined);
    expect([m1, m2].every((p) => p !== null)).toBe(true);
    // Mastodon's places freed stay free for its share, not taken by the waiting X post.
    await m1?.release();
    await m2?.release();
    await Promise.resolve();
    expect(woken).toBe(false);
    expect(lanes.waiting()).toBe(1);
    // An X place freed goes to the oldest X waiter.
    await x[0]?.release();
    expect(await burst).not.toBeNull();
    expect(woken).toBe(true);
  });

  it('gives up after its bound, and ends every wait on close (the caller hands the post back)', async () => {
    const bounded = waiting(50);
    await bounded.acquire('instagram', undefined);
    await bounded.acquire('instagram', undefined);
    expect(await bounded.acquire('instagram', undefined)).toBeNull();
    expect(bounded.waiting()).toBe(0);

    const lanes = waiting();
    await lanes.acquire('threads', undefined);
    await lanes.acquire('threads', undefined);
    const left = [lanes.acquire('threads', undefined), lanes.acquire('threads', undefined)];
    await Promise.resolve();
    expect(lanes.waiting()).toBe(2);
    lanes.close();
    expect(await Promise.all(left)).toEqual([null, null]);
    expect(lanes.waiting()).toBe(0);
    // Closed: a full lane answers at once, as a BullMQ job's would.
    expect(await lanes.acquire('threads', undefined)).toBeNull();
  });

  it('waits for a full account lane, holding no network place meanwhile, within the bound', async () => {
    const redis = await connected(factory.worker());
    try {
      const options = { ...LANES, accountCap: 1, retryMs: 20 };
      const accounts = createAccountLanes(redis, prefix, options);
      const lanes = createPublishLanes(4, { ...options, waitMs: 60_000 }, accounts, { wait: true });
      const first = await lanes.acquire('twitter', 'acct-w');
      expect(first).not.toBeNull();
      let got = false;
      const second = lanes.acquire('twitter', 'acct-w').then((place) => {
        got = true;
        return place;
      });
      await waitUntil(
        'the second post to wait for the account',
        async () => lanes.waiting() === 1,
        5_000,
        10,
      );
      expect(lanes.running('twitter')).toBe(1);
      expect(got).toBe(false);
      await first?.release();
      const place = await second;
      expect(place).not.toBeNull();
      expect(lanes.running('twitter')).toBe(1);
      // Nobody releases: the bound ends the wait with nothing held.
      const bounded = createPublishLanes(4, { ...options, waitMs: 100 }, accounts, { wait: true });
      expect(await bounded.acquire('twitter', 'acct-w')).toBeNull();
      expect(bounded.running('twitter')).toBe(0);
      await place?.release();
      expect(await accounts.held('twitter', 'acct-w')).toBe(0);
    } finally {
      await redis.quit();
    }
  });
});

describe('lanes: the publisher process', () => {
  let api: TTestApi;
  let sim: TRunningSim;
  const processes: TPublisherProcess[] = [];

  beforeAll(async () => {
    api = await startTestApi({ sim: true });
    sim = api.sim!;
  });
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop(2_000)));
    await api.close();
  });

  async function publishAll(apiKey: string, ids: string[]) {
    for (const id of ids) {
      const res = await request(api.app).post(`/v1/posts/${id}/publish`).set(bearer(apiKey));
      expect(res.status).toBe(200);
    }
  }
  async function create(apiKey: string, platform: TPlatform, texts: string[]): Promise<string[]> {
    const ids: string[] = [];
    for (const content of texts) {
      const res = await request(api.app)
        .post('/v1/posts')
        .set(bearer(apiKey))
        .send({ content, platforms: [platform] });
      expect(res.status).toBe(201);
      ids.push(res.body.id as string);
    }
    return ids;
  }
  async function allPublished(ids: string[]) {
    const n = await api.db.post.count({ where: { id: { in: ids }, status: 'published' } });
    return n === ids.length;
  }
  /** When the simulator stored each post with one of `texts` (ISO times sort as strings). */
  function arrivals(platform: TPlatform, texts: string[]): string[] {
    const wanted = new Set(texts);
    return sim.sim
      .postsOf(platform)
      .filter((p) => wanted.has(p.text))
      .map((p) => p.at)
      .sort();
  }

  it('a slow network holds at most its share: posts to a fast network go out meanwhile', async () => {
    const publisher = startPublisherProcess(api, sim, {
      PUBLISH_CONCURRENCY: '4',
      PUBLISH_NETWORK_SHARE: '0.5',
      PUBLISH_LANE_RETRY: '100ms',
    });
    processes.push(publisher);
    const { apiKey, accountId } = await api.account('pro');
    await api.connect(accountId, 'mastodon');
    await api.connect(accountId, 'twitter');
    // Mastodon answers every call after 1.5 s (below the test publisher's 2 s network timeout).
    sim.sim.addFault({ platform: 'mastodon', kind: 'slow', delayMs: 1_500, remaining: -1 });
    const slowTexts = Array.from({ length: 6 }, (_, i) => `lane-slow-${i}`);
    const fastTexts = Array.from({ length: 6 }, (_, i) => `lane-fast-${i}`);
    const slow = await create(apiKey, 'mastodon', slowTexts);
    const fast = await create(apiKey, 'twitter', fastTexts);
    // The slow network's posts are queued first: without lanes they would take all 4 slots.
    await api.queues.publish.pause();
    await publishAll(apiKey, [...slow, ...fast]);
    await api.queues.publish.resume();
    await waitUntil('every post published', () => allPublished([...slow, ...fast]), 60_000, 100);
    sim.sim.clearFaults();

    const lastFast = arrivals('twitter', fastTexts).at(-1) ?? '';
    // Two slots (half of 4) for Mastodon: at most its first two posts arrived before the last X post.
    expect(arrivals('mastodon', slowTexts).filter((at) => at < lastFast).length).toBeLessThanOrEqual(2);
    const counts = simCounts(sim, ['mastodon', 'twitter']);
    for (const text of slowTexts) expect(counts.get(`mastodon|${text}`)).toBe(1);
    for (const text of fastTexts) expect(counts.get(`twitter|${text}`)).toBe(1);
    await publisher.stop(5_000);
  }, 120_000);

  it('a full lane’s turned-back jobs go out in the order they were made, as places free', async () => {
    // A lane retry far longer than a send: without the wake on release the turned-back jobs would come
    // back by their (jittered) delays, in any order.
    const publisher = startPublisherProcess(api, sim, {
      PUBLISH_CONCURRENCY: '4',
      PUBLISH_NETWORK_SHARE: '0.5',
      PUBLISH_ACCOUNT_CONCURRENCY: '0',
      PUBLISH_LANE_RETRY: '10s',
    });
    processes.push(publisher);
    const { apiKey, accountId } = await api.account('pro');
    await api.connect(accountId, 'mastodon');
    sim.sim.addFault({ platform: 'mastodon', kind: 'slow', delayMs: 500, remaining: -1 });
    // Ten, so that jobs coming back by their jittered delays could not line up by chance.
    const texts = Array.from({ length: 10 }, (_, i) => `lane-fifo-${i}`);
    const ids = await create(apiKey, 'mastodon', texts);
    await api.queues.publish.pause();
    // One at a time, so the jobs are made in this order (a job's timestamp is when it was added).
    for (const id of ids) {
      await publishAll(apiKey, [id]);
      await new Promise((r) => setTimeout(r, 5));
    }
    await api.queues.publish.resume();
    await waitUntil('every post published', () => allPublished(ids), 90_000, 100);
    sim.sim.clearFaults();

    // Two places (half of 4): the posts go out two by two, each pair after the one before.
    const at = new Map(
      sim.sim
        .postsOf('mastodon')
        .filter((p) => texts.includes(p.text))
        .map((p) => [p.text, p.at]),
    );
    const pairs = [0, 2, 4, 6, 8].map(
      (i) => [at.get(texts[i] ?? ''), at.get(texts[i + 1] ?? '')] as string[],
    );
    for (let i = 1; i < pairs.length; i += 1) {
      const earlier = pairs[i - 1] as string[];
      const later = pairs[i] as string[];
      expect(later.every((t) => earlier.every((e) => e < t))).toBe(true);
    }
    const counts = simCounts(sim, ['mastodon']);
    for (const text of texts) expect(counts.get(`mastodon|${text}`)).toBe(1);
    await publisher.stop(5_000);
  }, 120_000);

  it('one account’s many posts leave room for another account’s post', async () => {
    const publisher = startPublisherProcess(api, sim, {
      PUBLISH_CONCURRENCY: '4',
      PUBLISH_NETWORK_SHARE: '1',
      PUBLISH_ACCOUNT_CONCURRENCY: '2',
      PUBLISH_LANE_RETRY: '100ms',
      // The sends below take 3 s: past the harness's 2 s timeout they would be unanswered sends.
      NETWORK_TIMEOUT: '10s',
    });
    processes.push(publisher);
    const busy = await api.account('pro');
    const quiet = await api.account('pro');
    await api.connect(busy.accountId, 'twitter', 'busy-x');
    await api.connect(quiet.accountId, 'twitter', 'quiet-x');
    // Each send holds its place 3 s: room enough, on a loaded box, for the held-back jobs to cycle and the
    // quiet account's job to be reached before the busy account's first two places free (1 s failed in a run).
    sim.sim.addFault({ platform: 'twitter', kind: 'slow', delayMs: 3_000, remaining: -1 });
    const manyTexts = Array.from({ length: 10 }, (_, i) => `lane-many-${i}`);
    const many = await create(busy.apiKey, 'twitter', manyTexts);
    const one = await create(quiet.apiKey, 'twitter', ['lane-one']);
    await api.queues.publish.pause();
    await publishAll(busy.apiKey, many);
    await publishAll(quiet.apiKey, one);
    await api.queues.publish.resume();
    await waitUntil('every post published', () => allPublished([...many, ...one]), 90_000, 100);
    sim.sim.clearFaults();

    const oneAt = arrivals('twitter', ['lane-one'])[0] ?? '';
    // The busy account holds two places at once: its first two posts at most came before the quiet one
    // (without the cap, eight of them would: two rounds of four slots).
    expect(arrivals('twitter', manyTexts).filter((at) => at < oneAt).length).toBeLessThanOrEqual(2);
    const counts = simCounts(sim, ['twitter']);
    for (const text of [...manyTexts, 'lane-one']) expect(counts.get(`twitter|${text}`)).toBe(1);
    await publisher.stop(5_000);
  }, 150_000);
});
