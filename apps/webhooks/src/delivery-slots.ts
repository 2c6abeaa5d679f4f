// Fair use of a process's delivery slots (WEBHOOK_CONCURRENCY). BullMQ OSS has no per-group concurrency
// (groups are BullMQ Pro), so the worker keeps it: a delivery starts only while its webhook has fewer than
// `perWebhook` and its account fewer than `perAccount` deliveries in flight here; otherwise the job goes
// back to the delayed set (no slot held, no attempt counted) and returns after about two of that
// webhook's recent delivery times, or as long as its oldest delivery in flight has been running
// (milliseconds for a fast receiver, up to seconds for a hanging one, so jobs waiting behind a hanging
// receiver come back rarely). One
// tenant's slow or hanging receivers can then hold at most `perAccount` slots, and the others keep the rest.

export interface TSlotLimits {
  perWebhook: number;
  perAccount: number;
}

/** Bounds of a deferral's delay (plus up to 50% jitter). */
const DEFER_MIN_MS = 10;
const DEFER_MAX_MS = 5_000;
/** A webhook's delivery time before any was measured. */
const UNKNOWN_DURATION_MS = 100;
/** Webhooks remembered (owner, recent duration); past it the maps start over. */
const TRACKED_MAX = 50_000;

export class DeliverySlots {
  /** Start times of the deliveries in flight, per webhook and per account (their length is the count). */
  private readonly byWebhook = new Map<string, number[]>();
  private readonly byAccount = new Map<string, number[]>();
  /** Recent delivery time per webhook (exponentially weighted), to choose how long a deferral waits. */
  private readonly durations = new Map<string, number>();
  /** Webhook → account, so a job can be deferred before its delivery is read from PostgreSQL. */
  private readonly owners = new Map<string, string>();

  constructor(private readonly limits: TSlotLimits) {}

  accountOf(webhookId: string): string | undefined {
    return this.owners.get(webhookId);
  }

  remember(webhookId: string, accountId: string): void {
    if (this.owners.size >= TRACKED_MAX) this.owners.clear();
    this.owners.set(webhookId, accountId);
  }

  /** Whether both counts leave room; nothing is taken. */
  hasRoom(webhookId: string, accountId: string): boolean {
    return (
      (this.byWebhook.get(webhookId)?.length ?? 0) < this.limits.perWebhook &&
      (this.byAccount.get(accountId)?.length ?? 0) < this.limits.perAccount
    );
  }

  /** Takes a slot when there is room: its start time, to give back to `release`; null when there is none. */
  take(webhookId: string, accountId: string): number | null {
    if (!this.hasRoom(webhookId, accountId)) return null;
    const start = Date.now();
    push(this.byWebhook, webhookId, start);
    push(this.byAccount, accountId, start);
    return start;
  }

  release(webhookId: string, accountId: string, start: number): void {
    remove(this.byWebhook, webhookId, start);
    remove(this.byAccount, accountId, start);
    if (this.durations.size >= TRACKED_MAX) this.durations.clear();
    const ms = Date.now() - start;
    const before = this.durations.get(webhookId);
    this.durations.set(webhookId, before === undefined ? ms : before * 0.7 + ms * 0.3);
  }

  /**
   * How long to put a job back for: about two of its webhook's recent delivery times, and at least as long
   * as the oldest delivery in flight of its webhook or account has been running.
   */
  deferFor(webhookId: string | undefined, accountId: string | undefined): number {
    const now = Date.now();
    const recent = (webhookId && this.durations.get(webhookId)) || UNKNOWN_DURATION_MS;
    const running = Math.max(
      now - Math.min(now, ...(webhookId ? (this.byWebhook.get(webhookId) ?? []) : [])),
      now - Math.min(now, ...(accountId ? (this.byAccount.get(accountId) ?? []) : [])),
    );
    const base = Math.min(DEFER_MAX_MS, Math.max(DEFER_MIN_MS, 2 * recent, running));
    return Math.round(base * (1 + Math.random() / 2));
  }
}

function push(map: Map<string, number[]>, key: string, start: number): void {
  const list = map.get(key);
  if (list) list.push(start);
  else map.set(key, [start]);
}

function remove(map: Map<string, number[]>, key: string, start: number): void {
  const list = map.get(key);
  if (!list) return;
  const i = list.indexOf(start);
  if (i !== -1) list.splice(i, 1);
  if (list.length === 0) map.delete(key);
}
