import DataLoader from 'dataloader';
import { isDbUnavailable } from './client.js';

/**
 * Concurrent calls that arrive in the same turn of the event loop run as one statement: workers handle
 * dozens of jobs at once, and on a busy box each statement's fixed cost (a round trip, socket writes on
 * both sides, an executor start) is most of what a small write costs. `setImmediate` closes a batch after
 * the current turn's I/O callbacks, so a lone call waits no longer than that. No cache: every call reads
 * or writes PostgreSQL.
 *
 * `run` gets items and answers each (a value, or an Error for that caller alone). With `key`, a batch is
 * split into rounds in which each key appears once (one statement may not change a row twice), run one
 * after the other, so a later duplicate sees what the earlier one did. A round that throws fails only its
 * own callers; unless the database is unavailable, its items are then tried one by one, so one bad item
 * (a post deleted meanwhile, a broken constraint) does not fail the others. A round is one statement or
 * one transaction, so nothing of it was written when it threw.
 */
export function batchLoader<K, V>(
  run: (items: readonly K[]) => Promise<(V | Error)[]>,
  key?: (item: K) => string,
): DataLoader<K, V> {
  const settle = async (items: K[]): Promise<(V | Error)[]> => {
    try {
      return await run(items);
    } catch (error) {
      if (items.length === 1 || isDbUnavailable(error)) return items.map(() => asError(error));
      return Promise.all(
        items.map(async (item) => {
          try {
            const [answer] = await run([item]);
            return answer as V | Error;
          } catch (alone) {
            return asError(alone);
          }
        }),
      );
    }
  };
  return new DataLoader<K, V>(
    async (keys) => {
      const results: (V | Error)[] = new Array(keys.length);
      const rounds = key ? uniqueRounds(keys, key) : [keys.map((_, i) => i)];
      for (const indexes of rounds) {
        const answers = await settle(indexes.map((i) => keys[i] as K));
        indexes.forEach((index, j) => {
          results[index] = answers[j] as V | Error;
        });
      }
      return results;
    },
    { cache: false, maxBatchSize: 100, batchScheduleFn: (go) => setImmediate(go) },
  );
}

/**
 * DataLoader rejects a caller only for an `Error` instance; an error object from another realm (Node's own
 * socket errors seen from a VM context, as under jest) is wrapped, keeping its message, code and cause.
 */
function asError(error: unknown): Error {
  if (error instanceof Error) return error;
  const e = error as { message?: unknown; code?: unknown } | null;
  const wrapped = new Error(typeof e?.message === 'string' ? e.message : String(error), { cause: error });
  return typeof e?.code === 'string' ? Object.assign(wrapped, { code: e.code }) : wrapped;
}

/** Splits a batch into rounds in which each key appears at most once; later duplicates in later rounds, in call order. */
export function uniqueRounds<T>(items: readonly T[], key: (item: T) => string): number[][] {
  const rounds: number[][] = [];
  const seen: Set<string>[] = [];
  items.forEach((item, index) => {
    const k = key(item);
    let round = 0;
    while (seen[round]?.has(k)) round += 1;
    const keys = seen[round] ?? new Set<string>();
    const indexes = rounds[round] ?? [];
    keys.add(k);
    indexes.push(index);
    seen[round] = keys;
    rounds[round] = indexes;
  });
  return rounds;
}
