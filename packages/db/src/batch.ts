import DataLoader from 'dataloader';

/**
 * Concurrent calls that arrive in the same turn of the event loop run as one statement: workers handle
 * dozens of jobs at once, and on a busy box each statement's fixed cost (a round trip, socket writes on
 * both sides, an executor start) is most of what a small write costs. `setImmediate` closes a batch after
 * the current turn's I/O callbacks, so a lone call waits no longer than that. No cache: every call reads
 * or writes PostgreSQL.
 */
export function batchLoader<K, V>(run: (keys: readonly K[]) => Promise<(V | Error)[]>): DataLoader<K, V> {
  return new DataLoader<K, V>(run, {
    cache: false,
    maxBatchSize: 100,
    batchScheduleFn: (go) => setImmediate(go),
  });
}

/**
 * Splits a batch into rounds in which each key appears at most once: one statement may not update the same
 * row twice (`ON CONFLICT DO UPDATE` refuses, `UPDATE … FROM` would apply only one). Later duplicates run
 * in a later round, in call order.
 */
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
