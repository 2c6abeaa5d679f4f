import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { testPrefix } from '@sps/db/testing';
import type { TRedis } from '@sps/queue';
import { connected, testRedisFactory } from '../../api/test/harness.js';
import { createReadBudget, readCap, type TReadBudgetConfig } from '../src/metrics-budget.js';

// The read budget against a real Redis (a cluster when REDIS_CLUSTER_NODES is set): two budgets on one
// prefix stand for two publisher processes drawing from the same counters.

describe('metrics read budget', () => {
  let redis: TRedis;
  let other: TRedis;
  const factory = testRedisFactory();

  beforeAll(async () => {
    redis = await connected(factory.producer());
    other = await connected(factory.producer());
  });
  afterAll(async () => {
    await redis.quit();
    await other.quit();
  });

  it('takes share × the documented limit; an override replaces it whole', () => {
    const config: TReadBudgetConfig = { share: 0.5, overrides: {} };
    expect(readCap('mastodon', config)).toMatchObject({ limit: 150, windowMs: 300_000, per: 'account' });
    expect(readCap('telegram', config)).toBeNull();
    expect(
      readCap('mastodon', {
        share: 0.5,
        overrides: { mastodon: { limit: 7, windowMs: 1000, per: 'network' } },
      }),
    ).toEqual({ limit: 7, windowMs: 1000, per: 'network' });
  });

  it('counts across processes per account, and says how long until the window turns', async () => {
    const prefix = testPrefix('readbudget');
    const config: TReadBudgetConfig = {
      share: 1,
      overrides: { mastodon: { limit: 3, windowMs: 60_000, per: 'account' } },
    };
    const a = createReadBudget(redis, prefix, config);
    const b = createReadBudget(other, prefix, config);
    const taken = [
      await a.take('mastodon', 'acc-1'),
      await b.take('mastodon', 'acc-1'),
      await a.take('mastodon', 'acc-1'),
    ];
    expect(taken).toEqual([{ ok: true }, { ok: true }, { ok: true }]);
    const spent = await b.take('mastodon', 'acc-1');
    expect(spent.ok).toBe(false);
    const waitMs = spent.ok ? 0 : spent.waitMs;
    expect(waitMs).toBeGreaterThan(0);
    expect(waitMs).toBeLessThanOrEqual(60_000);
    // Another account has its own budget where the network counts per user.
    expect(await a.take('mastodon', 'acc-2')).toEqual({ ok: true });
    // Networks without a budget (Telegram has nothing to read) are never held.
    expect(await a.take('telegram', 'acc-1')).toEqual({ ok: true });
  });

  it('a per-network budget is shared by every account', async () => {
    const prefix = testPrefix('readbudget');
    const budget = createReadBudget(redis, prefix, {
      share: 1,
      overrides: { bluesky: { limit: 1, windowMs: 60_000, per: 'network' } },
    });
    expect(await budget.take('bluesky', 'acc-1')).toEqual({ ok: true });
    expect((await budget.take('bluesky', 'acc-2')).ok).toBe(false);
  });
});
