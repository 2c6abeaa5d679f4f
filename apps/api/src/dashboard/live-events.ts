import { AppError } from '@sps/core';
import { FEED_START_ID, type TEventFeedRepository, type TFeedEvent } from '@sps/db';
import { dashboardChannel, duplicateForSubscribe, type TRedis } from '@sps/queue';
import type { Logger } from 'pino';

/**
 * What the dashboard's stream says: which post or social account changed, and how. The page refetches what
 * it shows, through the same routes as ever, so the stream carries ids and types only (never content).
 */
export interface TLiveEvent {
  /** Outbox event id, or absent for a change notice. */
  id?: string;
  /**
   * An outbox type (`post.published`, `account.connected`, …), `post.changed` (a change the outbox does not
   * record) or `post.metrics` (a collection of the post's figures landed).
   */
  type: string;
  post_id?: string;
  status?: string;
  account_id?: string;
}

/** One open stream. `send` returns false when the client does not keep up (the stream is then ended). */
export interface TLiveSink {
  send(event: TLiveEvent): boolean;
  end(): void;
}

export interface TLiveEventsOptions {
  feed: TEventFeedRepository;
  /** Publishes change notices; a duplicate of it (made on the first stream) receives them. */
  redis: TRedis;
  prefix: string;
  logger: Logger;
  /** How often the outbox is read while any stream is open. */
  pollMs: number;
  /** Open streams one account may have in this process (tabs, devices). */
  maxPerAccount: number;
  /** Open streams in this process in all. */
  maxTotal: number;
}

/**
 * How far back each read looks again: `created_at` is the writing transaction's start, so a transaction that
 * commits late shows a time behind rows already read. Seen ids are remembered for this long.
 */
const LOOKBACK_MS = 5_000;
const BATCH = 500;
/** Reads per poll at most when the outbox is busy (each reads up to BATCH rows). */
const MAX_READS_PER_POLL = 20;

/**
 * The dashboard's live updates in one API process: open streams by account, one reader of the outbox for
 * all of them (while any is open), and the change notices every API process publishes on Redis for what the
 * outbox does not record (a draft created, edited, deleted, approved or queued; a publish started).
 */
export class LiveEvents {
  private readonly sinks = new Map<string, Set<TLiveSink>>();
  private total = 0;
  private subscriber: TRedis | null = null;
  private timer: NodeJS.Timeout | null = null;
  private polling = false;
  private cursor: Date | null = null;
  private readonly seen = new Map<string, number>();
  private closed = false;

  constructor(private readonly options: TLiveEventsOptions) {}

  get channel(): string {
    return dashboardChannel(this.options.prefix);
  }

  /** Open streams of one account in this process (for tests and metrics). */
  openFor(accountId: string): number {
    return this.sinks.get(accountId)?.size ?? 0;
  }

  /** Registers a stream; refuses one over the bounds. Returns the function that unregisters it. */
  open(accountId: string, sink: TLiveSink): () => void {
    if (this.closed) throw new AppError('service_unavailable', 'The server is shutting down');
    const mine = this.sinks.get(accountId) ?? new Set<TLiveSink>();
    if (mine.size >= this.options.maxPerAccount || this.total >= this.options.maxTotal) {
      throw new AppError('rate_limited', 'Too many live dashboard connections', {
        fix: `Close some dashboard tabs: an account may keep ${this.options.maxPerAccount} open. The others update every 30 seconds.`,
        retryAfter: 30,
      });
    }
    mine.add(sink);
    this.sinks.set(accountId, mine);
    this.total += 1;
    this.start();
    let open = true;
    return () => {
      if (!open) return;
      open = false;
      mine.delete(sink);
      this.total -= 1;
      if (mine.size === 0) this.sinks.delete(accountId);
      if (this.total === 0) this.stopPolling();
    };
  }

  /** Tells every API process's streams of this account that a post changed. Best effort, never throws. */
  postChanged(accountId: string, postId: string | null): void {
    const message = JSON.stringify({ a: accountId, p: postId });
    this.options.redis.publish(this.channel, message).catch((err: unknown) => {
      this.options.logger.debug({ err: (err as Error).message }, 'dashboard change notice not published');
    });
  }

  /** Ends every stream (the server is stopping) and stops reading. */
  async close(): Promise<void> {
    this.closed = true;
    for (const set of this.sinks.values()) for (const sink of [...set]) sink.end();
    this.sinks.clear();
    this.total = 0;
    this.stopPolling();
    const subscriber = this.subscriber;
    this.subscriber = null;
    if (subscriber) await subscriber.quit().catch(() => subscriber.disconnect());
  }

  private deliver(accountId: string, event: TLiveEvent): void {
    const set = this.sinks.get(accountId);
    if (!set) return;
    for (const sink of [...set]) {
      if (!sink.send(event)) sink.end();
    }
  }

  private start(): void {
    if (!this.subscriber) {
      // On a Redis Cluster too: classic PUBLISH reaches a subscriber on any node.
      const subscriber = duplicateForSubscribe(this.options.redis, `${this.options.prefix}-dashboard-events`);
      subscriber.on('error', (err) =>
        this.options.logger.warn({ err: err.message }, 'dashboard events subscriber error'),
      );
      subscriber.on('message', (_channel: string, raw: string) => this.onNotice(raw));
      subscriber.subscribe(this.channel).catch((err: unknown) => {
        this.options.logger.warn({ err: (err as Error).message }, 'dashboard change notices not subscribed');
      });
      this.subscriber = subscriber;
    }
    if (!this.timer) {
      this.timer = setInterval(() => void this.poll(), this.options.pollMs);
      this.timer.unref();
    }
  }

  private stopPolling(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    // The next first stream starts from then: what happened while nobody watched is in the lists it loads.
    this.cursor = null;
    this.seen.clear();
  }

  private onNotice(raw: string): void {
    let notice: { a?: unknown; p?: unknown; k?: unknown };
    try {
      notice = JSON.parse(raw) as { a?: unknown; p?: unknown; k?: unknown };
    } catch {
      return;
    }
    if (typeof notice.a !== 'string') return;
    this.deliver(notice.a, {
      // The publisher's notice that a post's figures were collected (engagement.ts).
      type: notice.k === 'metrics' ? 'post.metrics' : 'post.changed',
      ...(typeof notice.p === 'string' ? { post_id: notice.p } : {}),
    });
  }

  /** Reads the outbox once (a few batches when busy); overlapping ticks are skipped. */
  private async poll(): Promise<void> {
    if (this.polling || this.sinks.size === 0) return;
    this.polling = true;
    try {
      this.cursor ??= await this.options.feed.now();
      let after = { createdAt: new Date(this.cursor.getTime() - LOOKBACK_MS), id: FEED_START_ID };
      for (let read = 0; read < MAX_READS_PER_POLL; read += 1) {
        const accounts = [...this.sinks.keys()];
        const rows = await this.options.feed.since(accounts, after, BATCH);
        for (const row of rows) this.onEvent(row);
        if (rows.length < BATCH) break;
        const last = rows.at(-1)!;
        after = { createdAt: last.createdAt, id: last.id };
      }
      this.forgetOld();
    } catch (err) {
      this.options.logger.warn({ err: (err as Error).message }, 'dashboard events: outbox read failed');
    } finally {
      this.polling = false;
    }
  }

  private onEvent(row: TFeedEvent): void {
    if (this.seen.has(row.id)) return;
    const at = row.createdAt.getTime();
    this.seen.set(row.id, at);
    if (!this.cursor || at > this.cursor.getTime()) this.cursor = row.createdAt;
    this.deliver(row.accountId, {
      id: row.id,
      type: row.type,
      ...(row.postId ? { post_id: row.postId } : {}),
      ...(row.postStatus ? { status: row.postStatus } : {}),
      ...(row.socialAccountId ? { account_id: row.socialAccountId } : {}),
    });
  }

  private forgetOld(): void {
    if (!this.cursor) return;
    const horizon = this.cursor.getTime() - LOOKBACK_MS;
    for (const [id, at] of this.seen) if (at < horizon) this.seen.delete(id);
  }
}
