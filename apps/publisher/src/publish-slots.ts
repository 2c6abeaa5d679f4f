/**
 * At most `limit` in-process publishes at once; the rest wait their turn in arrival order. `room()` lets a
 * producer hold back while more than `roomAt` are waiting, so the posts started but not yet publishing stay
 * few (they hold rows in `publishing` that the reconciler watches).
 */
export function createPublishSlots(limit: number, roomAt: number) {
  let running = 0;
  const waiting: (() => void)[] = [];
  const roomWaiters: (() => void)[] = [];
  return {
    async run<T>(work: () => Promise<T>): Promise<T> {
      if (running >= limit) await new Promise<void>((go) => waiting.push(go));
      running += 1;
      try {
        return await work();
      } finally {
        running -= 1;
        waiting.shift()?.();
        if (waiting.length <= roomAt) for (const go of roomWaiters.splice(0)) go();
      }
    },
    async room(): Promise<void> {
      while (waiting.length > roomAt) await new Promise<void>((go) => roomWaiters.push(go));
    },
  };
}
