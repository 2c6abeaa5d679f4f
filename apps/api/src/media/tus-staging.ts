import { join } from 'node:path';
import type { TMediaStorageConfig } from '@sps/core';
import { FileStore } from '@tus/file-store';
import type { TTusStaging } from './tus-uploads.js';

/** Unfinished tus uploads older than this are removed by `cleanUpExpiredUploads`. */
export const TUS_EXPIRATION_MS = 24 * 60 * 60 * 1000;

/**
 * Where unfinished tus uploads wait: files under `MEDIA_DIR/tus-staging`, with either media store. A
 * finished upload is streamed from there into the media store (filesystem or S3).
 *
 * Not `@tus/s3-store` for MEDIA_STORAGE=s3 (which would let any API instance take the next PATCH): it needs
 * S3's ListParts, which the local S3 API server the tests run against (s3rver) does not implement, so that
 * path could not be tested here. With several API instances and S3, route `/v1/media/uploads/*` of one
 * upload to one instance (sticky sessions) or share MEDIA_DIR between them. See docs: known gaps.
 */
export function createTusStaging(config: TMediaStorageConfig, mediaDir: string): TTusStaging {
  return new FileStore({
    directory: join(config.kind === 'fs' ? config.dir : mediaDir, 'tus-staging'),
    expirationPeriodInMilliseconds: TUS_EXPIRATION_MS,
  });
}
