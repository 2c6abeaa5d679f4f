export { createStorage, type TStorageConfig } from './create-storage.js';
export { createFsStorage } from './fs-storage.js';
export { createS3Storage, type TS3StorageConfig } from './s3-storage.js';
export {
  assertKey,
  StorageNotFoundError,
  type TByteRange,
  type TPutOptions,
  type TStorage,
  type TStoredObject,
} from './storage.js';
