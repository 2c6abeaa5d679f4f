import { join } from 'node:path';
import type { TMediaStorageConfig } from '@sps/core';
import type { TRedis } from '@sps/queue';
import type { TStorage } from '@sps/storage';
import { FileStore } from '@tus/file-store';
import { SharedTusStaging } from './tus-shared-staging.js';
import type { TTusStaging } from './tus-uploads.js';

/** Unfinished tus uploads older than this are removed by `cleanUpExpiredUploads`. */
export const TUS_EXPIRATION_MS = 24 * 60 * 60 * 1000;

/**
 * Where unfinished tus uploads wait. MEDIA_STORAGE=s3: pieces in the bucket and state in Redis
 * (`SharedTusStaging`), so any API instance takes any request of an upload. MEDIA_STORAGE=fs: files under
 * `MEDIA_DIR/tus-staging` (tus's FileStore, which keeps the bytes of a PATCH cut short); several instances
 * need MEDIA_DIR shared anyway for the media themselves, and the Redis lock makes their tus requests safe on
 * it. A finished upload is moved from staging into the media store (see `TTusStaging.source`).
 */
export function createTusStaging(
  config: TMediaStorageConfig,
  mediaDir: string,
  shared: { redis: TRedis; storage: TStorage; prefix: string },
): TTusStaging {
  if (config.kind === 's3') return new SharedTusStaging({ ...shared, expirationMs: TUS_EXPIRATION_MS });
  const directory = join(config.kind === 'fs' ? config.dir : mediaDir, 'tus-staging');
  const staging: TTusStaging = new FileStore({
    directory,
    expirationPeriodInMilliseconds: TUS_EXPIRATION_MS,
  });
  // FileStore keeps an upload as the file `<directory>/<id>` (ids are checked hex, see tus-uploads.ts):
  // under MEDIA_DIR, the same filesystem as the store, so it is hard-linked into place, not copied.
  staging.source = async (id) => ({ file: join(directory, id) });
  return staging;
}
