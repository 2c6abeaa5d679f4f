// LiveEvents' reading of the outbox with a fake feed (no database): late commits, duplicates, bursts, bounds.
import { afterEach, describe, expect, it } from '@jest/globals';
import type { TEventFeedRepository, TFeedEvent } from '@sps/db';
import type { Redis } from 'ioredis';
import pino from 'pino';
import { LiveEvents, type TLiveEvent } from '../src/dashboard/live-events.js';

const A = '00000000-0000-4000-8000-00000000000a';
const B = '00000000-0000-4000-8000-00000000000b';
const T0 = new Date('2026-11-26T12:00:00.000Z');

/** The outbox as a list; `since` answers as the SQL does (account filter, created_at > after, oldest first). */
function fakeFeed(rows: TFeedEvent[]): TEventFeedRepository & { reads: number } {
  const feed = {
    reads: 0,
    async now() {
      return T0;
    },
    async since(accounts: readonly string[], after: { createdAt: Date; id: string }, limit: number) {
      feed.reads += 1;
      const t = after.createdAt.getTime();
      return rows
        .filter(
          (r) =>
            accounts.includes(r.accountId) &&
            (r.createdAt.getTime() > t || (r.createdAt.getTime() === t && r.id > after.id)),
        )
        .sort((x, y) => x.createdAt.getTime() - y.createdAt.getTime() || x.id.localeCompare(y.id))
        .slice(0, limit);
    },
  };
  return feed;
}

function fakeRedis(): Redis {
  const subscriber = {
    on: () => subscriber,
    subscribe: async () => 1,
    quit: async () => 'OK',
    disconnect: () => undefined,
  };
  return { duplicate: () => subscriber, publish: async () => 0 } as unknown as Redis;
}

function event(id: string, accountId: string, msAfterT0: number): TFeedEvent {
  return {
    id,
    accountId,
    type: 'post.published',
    createdAt: new Date(T0.getTime() + msAfterT0),
    postId: `post-${id}`,
    postStatus: 'published',
    socialAccountId: null,
  };
}

describe('LiveEvents', () => {
  let live: LiveEvents | null = null;
  afterEach(async () => {
    await live?.close();
  });

  function start(rows: TFeedEvent[], maxPerAccount = 3) {
    const feed = fakeFeed(rows);
    live = new LiveEvents({
      feed,
      redis: fakeRedis(),
      prefix: 'test',
      logger: pino({ level: 'silent' }),
      // The timer is not used: the test calls poll() itself.
      pollMs: 3_600_000,
      maxPerAccount,
      maxTotal: 10,
    });
    const received: Record<string, TLiveEvent[]> = { [A]: [], [B]: [] };
    const sink = (account: string) => ({
      send: (e: TLiveEvent) => {
        received[account]!.push(e);
        return true;
      },
      end: () => undefined,
    });
    return { feed, live, received, sink };
  }
  const poll = (l: LiveEvents) => (l as unknown as { poll(): Promise<void> }).poll();

  it('sends each account only its own events, once, including a late commit behind the cursor', async () => {
    const rows = [event('e1', A, 1000), event('e2', B, 1100)];
    const { live: l, received, sink } = start(rows);
    l.open(A, sink(A));
    l.open(B, sink(B));
    await poll(l);
    expect(received[A]!.map((e) => e.id)).toEqual(['e1']);
    expect(received[B]!.map((e) => e.id)).toEqual(['e2']);
    // A transaction that started earlier commits now: its created_at is behind what was already read.
    rows.push(event('late', A, 900), event('e3', A, 1200));
    await poll(l);
    await poll(l);
    expect(received[A]!.map((e) => e.id)).toEqual(['e1', 'late', 'e3']);
    expect(received[A]![0]).toEqual({
      id: 'e1',
      type: 'post.published',
      post_id: 'post-e1',
      status: 'published',
    });
  });

  it('reads a burst bigger than one batch in the same poll', async () => {
    const rows = Array.from({ length: 1200 }, (_, i) => event(`b${String(i).padStart(4, '0')}`, A, 10 + i));
    const { live: l, received, sink, feed } = start(rows);
    l.open(A, sink(A));
    await poll(l);
    expect(received[A]).toHaveLength(1200);
    expect(new Set(received[A]!.map((e) => e.id)).size).toBe(1200);
    expect(feed.reads).toBe(3);
  });

  it('reads a burst written by one statement (one created_at for all) past the batch size', async () => {
    const rows = Array.from({ length: 700 }, (_, i) => event(`s${String(i).padStart(4, '0')}`, A, 50));
    const { live: l, received, sink } = start(rows);
    l.open(A, sink(A));
    await poll(l);
    expect(new Set(received[A]!.map((e) => e.id)).size).toBe(700);
  });

  it('refuses a stream over the per-account bound, and frees the slot when one closes', () => {
    const { live: l, sink } = start([], 2);
    const close1 = l.open(A, sink(A));
    l.open(A, sink(A));
    expect(() => l.open(A, sink(A))).toThrow(
      expect.objectContaining({ code: 'rate_limited', retryAfter: 30 }),
    );
    // Another account is not affected.
    expect(() => l.open(B, sink(B))).not.toThrow();
    close1();
    close1(); // twice is harmless
    expect(l.openFor(A)).toBe(1);
    expect(() => l.open(A, sink(A))).not.toThrow();
  });

  it('stops reading when the last stream closes', async () => {
    const { live: l, sink, feed } = start([event('x', A, 1)]);
    const close = l.open(A, sink(A));
    await poll(l);
    close();
    const before = feed.reads;
    await poll(l);
    expect(feed.reads).toBe(before);
  });
});
