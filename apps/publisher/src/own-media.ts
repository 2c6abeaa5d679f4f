import { mediaStorageKey, ownMediaId } from '@sps/core';
import type { TOwnMediaSource } from '@sps/networks';
import { StorageNotFoundError, type TStorage } from '@sps/storage';

/**
 * Media library URLs (`${PUBLIC_URL}/media/<id>.<ext>`) read straight from the media store: the key
 * follows from the id, so no database read and no HTTP request to our own API is needed.
 */
export function ownMediaSource(publicUrl: string, storage: TStorage): TOwnMediaSource {
  const localPath = storage.localPath?.bind(storage);
  return {
    ...(localPath
      ? {
          async localFile(url: string) {
            const id = ownMediaId(publicUrl, url);
            if (!id) return null;
            const key = mediaStorageKey(id);
            return (await storage.stat(key)) ? { found: true, path: localPath(key) } : { found: false };
          },
        }
      : {}),
    async open(url) {
      const id = ownMediaId(publicUrl, url);
      if (!id) return null;
      try {
        return { found: true, stream: await storage.get(mediaStorageKey(id)) };
      } catch (error) {
        if (error instanceof StorageNotFoundError) return { found: false };
        throw error;
      }
    },
  };
}
