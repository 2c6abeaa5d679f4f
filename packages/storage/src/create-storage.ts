import { createFsStorage } from './fs-storage.js';
import { createS3Storage, type TS3StorageConfig } from './s3-storage.js';
import type { TStorage } from './storage.js';

/** `MEDIA_STORAGE` and its settings, as an app's env.ts parsed them. */
export type TStorageConfig = { kind: 'fs'; dir: string } | ({ kind: 's3' } & TS3StorageConfig);

export function createStorage(config: TStorageConfig): TStorage {
  return config.kind === 'fs' ? createFsStorage(config.dir) : createS3Storage(config);
}
