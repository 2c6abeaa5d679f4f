/**
 * Answers of a network trusted for `ttlMs`, at most `maxEntries` of them: storing a key again moves it
 * to the newest place, and the oldest stored is forgotten first, so a caller naming ever new keys (servers,
 * handles) cannot grow it without end.
 */
export function createExpiringCache<V>(ttlMs: number, maxEntries: number) {
  const entries = new Map<string, { value: V; expiresAt: number }>();
  return {
    /** The stored value while it is fresh; undefined when missing or expired. */
    get(key: string): V | undefined {
      const cached = entries.get(key);
      return cached && cached.expiresAt > Date.now() ? cached.value : undefined;
    },
    set(key: string, value: V): void {
      entries.delete(key);
      entries.set(key, { value, expiresAt: Date.now() + ttlMs });
      if (entries.size > maxEntries) {
        const oldest = entries.keys().next().value;
        if (oldest !== undefined) entries.delete(oldest);
      }
    },
  };
}
