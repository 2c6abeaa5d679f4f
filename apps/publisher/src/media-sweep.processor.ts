import type { TMediaRepository } from '@sps/db';
import type { TStorage } from '@sps/storage';
import type { Logger } from 'pino';

export interface TMediaSweepConfig {
  storage: TStorage;
  /** MEDIA_RETENTION: an item no post uses goes this long after its upload and its last seen use. */
  retentionMs: number;
  /** How often the sweep runs (default 1 hour). */
  everyMs?: number;
}

/** Items removed per batch, and batches per run: one run is bounded, the next one takes the rest. */
const BATCH = 200;
const MAX_BATCHES = 25;

/**
 * The media library's lifecycle: removes the bytes, then the row, of items no post uses that are older
 * than the retention, and of items whose account was deleted (their rows lost the account at once, so
 * their URLs already answer 404). Bytes first: a crash in between leaves a row whose next sweep deletes
 * nothing and forgets it.
 */
export async function sweepMedia(
  media: TMediaRepository,
  config: TMediaSweepConfig,
  logger: Logger,
  now = new Date(),
): Promise<{ removed: number }> {
  const cutoff = new Date(now.getTime() - config.retentionMs);
  let removed = 0;
  for (let batch = 0; batch < MAX_BATCHES; batch += 1) {
    const items = await media.sweepCandidates(cutoff, BATCH);
    for (const item of items) {
      await config.storage.delete(item.storageKey);
      await media.forget(item.id);
      removed += 1;
    }
    if (items.length < BATCH) break;
  }
  if (removed > 0) logger.info({ removed }, 'media sweep removed unused items');
  return { removed };
}
