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

const LANES: TLaneOptions = { networkShare: 0.5, accountCap: 2, leaseMs: 600, retryMs: 50 };

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

  it('one account’s many posts leave room for another account’s post', async () => {
    const publisher = startPublisherProcess(api, sim, {
      PUBLISH_CONCURRENCY: '4',
      PUBLISH_NETWORK_SHARE: '1',
      PUBLISH_ACCOUNT_CONCURRENCY: '2',
      PUBLISH_LANE_RETRY: '100ms',
    });
    processes.push(publisher);
    const busy = await api.account('pro');
    const quiet = await api.account('pro');
    await api.connect(busy.accountId, 'twitter', 'busy-x');
    await api.connect(quiet.accountId, 'twitter', 'quiet-x');
    sim.sim.addFault({ platform: 'twitter', kind: 'slow', delayMs: 1_000, remaining: -1 });
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
