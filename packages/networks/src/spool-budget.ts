/**
 * The disk a publisher process may fill with spooled videos at once (media-fetch.ts `toFile`). Videos run
 * to 4 GB (TikTok, YouTube) and the per-account lane allows 25 publishes at once, so without a bound one
 * tenant could fill the disk and stall every other. A byte-counting semaphore, never waiting: a download
 * that does not fit is refused at once and the segment is retried later, so no worker slot waits for disk.
 */
export interface TSpoolBudgetConfig {
  /** Bytes all spooled files of this process may take together. */
  maxBytes: number;
  /** Share of `maxBytes` one account may hold (default 0.5), except a lone file, which may take it all. */
  accountShare?: number;
  /** The setting that sets `maxBytes`, named in refusals (`MEDIA_SPOOL_MAX`). */
  setting?: string;
}

/** Bytes held for one spooled file; `release` is idempotent (every path of a download calls it). */
export interface TSpoolLease {
  readonly bytes: number;
  /**
   * Holds `total` bytes in all (a download whose size was not announced grows as its bytes arrive);
   * null when it now holds them, else why not.
   */
  ensure(total: number): TSpoolRefusal | null;
  release(): void;
}

export type TSpoolRefusal =
  /** Larger than the whole budget: it can never fit (a permanent refusal). */
  | { kind: 'oversize'; message: string }
  /** The budget (or the account's share) is taken by other files now: try again once they are gone. */
  | { kind: 'full'; message: string };

export interface TSpoolBudget {
  readonly maxBytes: number;
  /** A lease holding `bytes` (0 when the size is not known yet), or why it cannot be had now. */
  reserve(
    account: string,
    bytes: number,
  ): { ok: true; lease: TSpoolLease } | { ok: false; refusal: TSpoolRefusal };
  /** Bytes held now, by everyone or by one account. */
  held(account?: string): number;
}

export function createSpoolBudget(config: TSpoolBudgetConfig): TSpoolBudget {
  const maxBytes = Math.max(0, Math.floor(config.maxBytes));
  const accountMax = Math.floor(maxBytes * Math.min(1, Math.max(0, config.accountShare ?? 0.5)));
  const setting = config.setting ?? 'the media spool budget';
  const byAccount = new Map<string, number>();
  let total = 0;

  /** Why `extra` more bytes for `account` (holding `mine` already) cannot be had, or null. */
  function refusal(account: string, mine: number, extra: number): TSpoolRefusal | null {
    const wanted = mine + extra;
    if (wanted > maxBytes) {
      return {
        kind: 'oversize',
        message: `the video needs more disk (${wanted} bytes) than this publisher may use for media in all (${setting} = ${maxBytes} bytes)`,
      };
    }
    if (total + extra > maxBytes) {
      return {
        kind: 'full',
        message: `this publisher's media disk budget (${setting} = ${maxBytes} bytes) is in use by other videos`,
      };
    }
    // The account's share bounds what it holds across files; one file alone may use the whole budget
    // (else a file between the share and the budget would wait forever).
    const accountHeld = byAccount.get(account) ?? 0;
    if (accountHeld - mine > 0 && accountHeld + extra > accountMax) {
      return {
        kind: 'full',
        message: `this account's videos already hold their share of the media disk budget (${accountMax} of ${setting} = ${maxBytes} bytes)`,
      };
    }
    return null;
  }

  function add(account: string, bytes: number) {
    total += bytes;
    const next = (byAccount.get(account) ?? 0) + bytes;
    if (next === 0) byAccount.delete(account);
    else byAccount.set(account, next);
  }

  return {
    maxBytes,
    reserve(account, bytes) {
      const first = Math.max(0, Math.ceil(bytes));
      const refused = refusal(account, 0, first);
      if (refused) return { ok: false, refusal: refused };
      add(account, first);
      let held = first;
      let released = false;
      const lease: TSpoolLease = {
        get bytes() {
          return released ? 0 : held;
        },
        ensure(wanted) {
          if (released) throw new Error('spool lease used after release');
          const extra = Math.ceil(wanted) - held;
          if (extra <= 0) return null;
          const refused = refusal(account, held, extra);
          if (refused) return refused;
          add(account, extra);
          held += extra;
          return null;
        },
        release() {
          if (released) return;
          released = true;
          add(account, -held);
        },
      };
      return { ok: true, lease };
    },
    held: (account) => (account === undefined ? total : (byAccount.get(account) ?? 0)),
  };
}
