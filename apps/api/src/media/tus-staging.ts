import { join } from 'node:path';
import type { TMediaStorageConfig } from '@sps/core';
import { FileStore } from '@tus/file-store';
import { S3Store } from '@tus/s3-store';
import type { TTusStaging } from './tus-uploads.js';

/** Unfinished tus uploads older than this are removed by `cleanUpExpiredUploads`. */
export const TUS_EXPIRATION_MS = 24 * 60 * 60 * 1000;

/**
 * Where unfinished tus uploads wait: beside the media on the filesystem (`MEDIA_DIR/tus-staging`), or in the
 * bucket as S3 multipart uploads (so any API instance can take the next PATCH).
 */
export function createTusStaging(config: TMediaStorageConfig): TTusStaging {
  if (config.kind === 'fs') {
    return new FileStore({
      directory: join(config.dir, 'tus-staging'),
      expirationPeriodInMilliseconds: TUS_EXPIRATION_MS,
    });
  }
  return new S3Store({
    partSize: 8 * 1024 * 1024,
    expirationPeriodInMilliseconds: TUS_EXPIRATION_MS,
    s3ClientConfig: {
      bucket: config.bucket,
      region: config.region,
      forcePathStyle: config.forcePathStyle,
      ...(config.endpoint ? { endpoint: config.endpoint } : {}),
      ...(config.accessKeyId && config.secretAccessKey
        ? { credentials: { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey } }
        : {}),
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    },
  });
}
