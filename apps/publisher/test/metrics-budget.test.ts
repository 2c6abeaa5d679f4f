import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { testPrefix } from '@sps/db/testing';
import type { TRedis } from '@sps/queue';
import { connected, testRedisFactory } from '../../api/test/harness.js';
import {
  createReadBudget,
  readBudgetKey,
  readCap,
  type TReadBudgetConfig,
  type TReadLimit,
  type TTake,
  tenantReadCap,
} from '../src/metrics-budget.js';

// The read budget against a real Redis (a cluster when REDIS_CLUSTER_NODES is set): two budgets on one
// prefix stand for two publisher processes drawing from the same counters. Windows of an hour where a test
// counts within one window, so a window turning mid-test is unlikely.

const HOUR = 3_600_000;
const youtube = (limit: number): TReadBudgetConfig['overrides'] => ({
  youtube: { limit, windowMs: HOUR, per: 'network' },
});
const oks = (taken: TTake[]) => taken.filter((t) => t.ok).length;

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
    const config: TReadBudgetConfig = { share: 0.5, tenantShare: 0.5, overrides: {} };
    expect(readCap('mastodon', config)).toMatchObject({ limit: 150, windowMs: 300_000, per: 'account' });
    expect(readCap('telegram', config)).toBeNull();
    expect(
      readCap('mastodon', {
        share: 0.5,
        tenantShare: 0.5,
        overrides: { mastodon: { limit: 7, windowMs: 1000, per: 'network' } },
      }),
    ).toEqual({ limit: 7, windowMs: 1000, per: 'network' });
  });

  it('counts across processes per account, and says how long until the window turns', async () => {
    const prefix = testPrefix('readbudget');
    const config: TReadBudgetConfig = {
      share: 1,
      tenantShare: 0.5,
      overrides: { mastodon: { limit: 3, windowMs: 60_000, per: 'account' } },
    };
    const a = createReadBudget(redis, prefix, config);
    const b = createReadBudget(other, prefix, config);
    const taken = [
      await a.take('mastodon', 'acc-1', 'ten-1'),
      await b.take('mastodon', 'acc-1', 'ten-1'),
      await a.take('mastodon', 'acc-1', 'ten-1'),
    ];
    expect(taken).toEqual([{ ok: true }, { ok: true }, { ok: true }]);
    const spent = await b.take('mastodon', 'acc-1', 'ten-1');
    expect(spent.ok).toBe(false);
    const waitMs = spent.ok ? 0 : spent.waitMs;
    expect(waitMs).toBeGreaterThan(0);
    expect(waitMs).toBeLessThanOrEqual(60_000);
    // Another account has its own budget where the network counts per user.
    expect(await a.take('mastodon', 'acc-2', 'ten-1')).toEqual({ ok: true });
    // Networks without a budget (Telegram has nothing to read) are never held.
    expect(await a.take('telegram', 'acc-1', 'ten-1')).toEqual({ ok: true });
  });

  it('a per-network budget is shared by every account', async () => {
    const prefix = testPrefix('readbudget');
    const budget = createReadBudget(redis, prefix, {
      share: 1,
      tenantShare: 0.5,
      overrides: { bluesky: { limit: 1, windowMs: 60_000, per: 'network' } },
    });
    expect(await budget.take('bluesky', 'acc-1', 'ten-1')).toEqual({ ok: true });
    expect((await budget.take('bluesky', 'acc-2', 'ten-2')).ok).toBe(false);
  });

  it("a tenant's share of a network-wide cap is its share of the window, at least one read", () => {
    const cap = (limit: number): TReadLimit => ({ limit, windowMs: HOUR, per: 'network' });
    const config = (tenantShare: number): TReadBudgetConfig => ({ share: 0.5, tenantShare, overrides: {} });
    expect(tenantReadCap(cap(600), config(0.5))).toBe(300);
    expect(tenantReadCap(cap(7), config(0.5))).toBe(3);
    expect(tenantReadCap(cap(3), config(0.01))).toBe(1);
    expect(tenantReadCap(cap(3), config(1))).toBe(3);
    // YouTube's day spread per minute, halved for reads: three a minute, one of them per tenant.
    const documented = readCap('youtube', config(0.5));
    expect(documented).toMatchObject({ limit: 3, per: 'network' });
    expect(documented && tenantReadCap(documented, config(0.5))).toBe(1);
  });

  it('a tenant alone reads at the network cap; once another asks, each takes at most its share', async () => {
    const prefix = testPrefix('readbudget');
    const config: TReadBudgetConfig = { share: 1, tenantShare: 0.5, overrides: youtube(8) };
    const a = createReadBudget(redis, prefix, config);
    const b = createReadBudget(other, prefix, config);
    // Tenant 1 alone, with a backlog on two channels read by two processes: the whole window is free to it.
    const alone: TTake[] = [];
    for (let i = 0; i < 4; i += 1)
      alone.push(await (i % 2 ? a : b).take('youtube', `yt-1${i % 2}`, 'tenant-1'));
    expect(oks(alone)).toBe(4);
    // Tenant 2 asks: from now on tenant 1 is held to its share (4 of 8, all taken already).
    expect(await a.take('youtube', 'yt-2', 'tenant-2')).toEqual({ ok: true });
    const capped = await b.take('youtube', 'yt-10', 'tenant-1');
    expect(capped.ok).toBe(false);
    expect(capped.ok ? 0 : capped.waitMs).toBeGreaterThan(0);
    expect(capped.ok ? HOUR + 1 : capped.waitMs).toBeLessThanOrEqual(HOUR);
    // Tenant 2 reads up to its own share in the same window; the network's cap stays the whole window's.
    const second: TTake[] = [];
    for (let i = 0; i < 5; i += 1) second.push(await a.take('youtube', 'yt-2', 'tenant-2'));
    expect(oks(second)).toBe(3);
    expect((await b.take('youtube', 'yt-3', 'tenant-3')).ok).toBe(false);
  });

  it('a tenant shut out of a full window holds the busy tenant to its share in the next', async () => {
    const prefix = testPrefix('readbudget');
    // Windows of 3 s: the test waits for one to turn (a count, not a time, is asserted). With 1 s windows a
    // loaded CI box once spread the next window's asks over two windows.
    const windowMs = 3_000;
    const config: TReadBudgetConfig = {
      share: 1,
      tenantShare: 0.5,
      overrides: { youtube: { limit: 4, windowMs, per: 'network' } },
    };
    const budget = createReadBudget(redis, prefix, config);
    // Start at the beginning of a window, so the asks below fall in one window.
    await new Promise((r) => setTimeout(r, windowMs - (Date.now() % windowMs) + 20));
    const busy: TTake[] = [];
    for (let i = 0; i < 4; i += 1) busy.push(await budget.take('youtube', 'yt-1', 'tenant-1'));
    expect(oks(busy)).toBe(4);
    const shut = await budget.take('youtube', 'yt-2', 'tenant-2');
    expect(shut.ok).toBe(false);
    await new Promise((r) => setTimeout(r, shut.ok ? 0 : shut.waitMs + 20));
    // Next window: tenant 2 asked in the last one, so tenant 1 gets its share (2), and tenant 2 its own.
    const next: TTake[] = [];
    for (let i = 0; i < 4; i += 1) next.push(await budget.take('youtube', 'yt-1', 'tenant-1'));
    expect(oks(next)).toBe(2);
    expect(await budget.take('youtube', 'yt-2', 'tenant-2')).toEqual({ ok: true });
  });

  it('a refusal by the tenant slot or the network slot leaves neither counted', async () => {
    const prefix = testPrefix('readbudget');
    const budget = createReadBudget(redis, prefix, { share: 1, tenantShare: 0.5, overrides: youtube(2) });
    const window = Math.floor(Date.now() / HOUR);
    const count = async (scope: string) =>
      Number((await redis.get(readBudgetKey(prefix, 'youtube', scope, window))) ?? 0);
    // Tenants 1 and 2 both read the network this window: each is held to one read.
    expect(await budget.take('youtube', 'yt-1', 'tenant-1')).toEqual({ ok: true });
    expect(await budget.take('youtube', 'yt-2', 'tenant-2')).toEqual({ ok: true });
    // Past its share: refused by the tenant slot, and the network's count is not touched.
    expect((await budget.take('youtube', 'yt-1', 'tenant-1')).ok).toBe(false);
    expect((await budget.take('youtube', 'yt-1', 'tenant-1')).ok).toBe(false);
    expect(await count('all')).toBe(2);
    expect(await count('tenant:tenant-1')).toBe(1);
    // The network's window is full: tenant 3's slot is given back, and the refusal adds nothing to the network's.
    expect((await budget.take('youtube', 'yt-3', 'tenant-3')).ok).toBe(false);
    expect(await count('tenant:tenant-3')).toBe(0);
    expect(await count('all')).toBe(2);
  });

  it('each command names one key, with no hash tag, as on a Redis Cluster', async () => {
    const calls: unknown[][] = [];
    // The budget's commands are its scripts, each defined with one key (redisScript); this stand-in passes
    // everything on to the real Redis and records each script call's arguments (the key first).
    const recording = new Proxy(redis, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target);
        if (typeof value !== 'function') return value;
        if (typeof prop === 'string' && prop.startsWith('sps_'))
          return (...args: unknown[]) => {
            calls.push(args);
            return value.apply(target, args);
          };
        return value.bind(target);
      },
    });
    const prefix = testPrefix('readbudget');
    const budget = createReadBudget(recording, `{${prefix}}`, {
      share: 1,
      tenantShare: 0.5,
      overrides: { ...youtube(1), mastodon: { limit: 1, windowMs: HOUR, per: 'account' } },
    });
    await budget.take('youtube', 'yt-1', 'tenant-{1}');
    await budget.take('youtube', 'yt-2', 'tenant-{2}');
    await budget.take('mastodon', 'acc-{1}', 'tenant-{1}');
    // YouTube: tenant 1 marked as asking, the last window's other tenants, its slot and the network's;
    // tenant 2 marked (two tenants now: the last window is not read), its slot, the network's refusal and
    // the give-back. Mastodon: the account's slot alone.
    expect(calls).toHaveLength(9);
    const keys = calls.map((args) => String(args[0]));
    for (const key of keys) {
      expect(key).not.toMatch(/[{}]/);
      expect(key.startsWith(`${prefix}:metrics-budget:`)).toBe(true);
    }
    const window = Math.floor(Date.now() / HOUR);
    expect(keys).toEqual([
      `${prefix}:metrics-budget:youtube:tenants:${window}`,
      `${prefix}:metrics-budget:youtube:tenants:${window - 1}`,
      `${prefix}:metrics-budget:youtube:tenant:tenant-1:${window}`,
      `${prefix}:metrics-budget:youtube:all:${window}`,
      `${prefix}:metrics-budget:youtube:tenants:${window}`,
      `${prefix}:metrics-budget:youtube:tenant:tenant-2:${window}`,
      `${prefix}:metrics-budget:youtube:all:${window}`,
      `${prefix}:metrics-budget:youtube:tenant:tenant-2:${window}`,
      `${prefix}:metrics-budget:mastodon:acc-1:${window}`,
    ]);
  });
});
