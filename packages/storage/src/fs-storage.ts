import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { copyFile, link, mkdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  assertKey,
  StorageNotFoundError,
  type TByteRange,
  type TPutOptions,
  type TStorage,
  type TStoredObject,
} from './storage.js';

function etagOf(size: number, mtimeMs: number): string {
  // Objects are written once under a new key and never rewritten, so size and mtime identify the bytes.
  return `"${size.toString(16)}-${Math.floor(mtimeMs).toString(16)}"`;
}

/** Counts and checks chunks on their way to the sink (`TPutOptions.onChunk`). */
export function watchChunks(onChunk: TPutOptions['onChunk']): Transform {
  let total = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      total += chunk.length;
      try {
        onChunk?.(chunk, total);
      } catch (error) {
        done(error as Error);
        return;
      }
      done(null, chunk);
    },
  });
}

/** Hard links refused: another filesystem, or one without hard links (some network and FUSE mounts). */
const NO_LINK = new Set(['EXDEV', 'EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EMLINK']);

/**
 * Objects as files under `root` (`MEDIA_DIR`). A write goes to a temporary file in the same directory and
 * is renamed into place when complete, so a reader never sees half an object and a crash leaves only a
 * `.tmp-*` file (never served: keys cannot start with a dot).
 */
export function createFsStorage(root: string): TStorage {
  const base = resolve(root);
  const pathOf = (key: string) => {
    assertKey(key);
    return join(base, key);
  };
  const statOf = async (key: string): Promise<TStoredObject | null> => {
    try {
      const info = await stat(pathOf(key));
      if (!info.isFile()) return null;
      return { key, size: info.size, etag: etagOf(info.size, info.mtimeMs), contentType: undefined };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  };
  return {
    kind: 'fs',
    localPath: pathOf,
    async put(key, body, options = {}) {
      const target = pathOf(key);
      await mkdir(dirname(target), { recursive: true });
      const temp = join(dirname(target), `.tmp-${randomUUID()}`);
      try {
        await pipeline(body, watchChunks(options.onChunk), createWriteStream(temp, { flags: 'wx' }));
        await rename(temp, target);
      } catch (error) {
        await rm(temp, { force: true });
        throw error;
      }
      const stored = await statOf(key);
      if (!stored) throw new StorageNotFoundError(key);
      return { ...stored, contentType: options.contentType };
    },
    async adopt(key, file) {
      const target = pathOf(key);
      await mkdir(dirname(target), { recursive: true });
      const temp = join(dirname(target), `.tmp-${randomUUID()}`);
      try {
        // A second name for the same inode, then renamed into place (atomic): no byte is read or written.
        await link(file, temp).catch(async (error: NodeJS.ErrnoException) => {
          if (!NO_LINK.has(error.code ?? '')) throw error;
          await copyFile(file, temp);
        });
        await rename(temp, target);
      } catch (error) {
        await rm(temp, { force: true });
        throw error;
      }
      const stored = await statOf(key);
      if (!stored) throw new StorageNotFoundError(key);
      return stored;
    },
    async get(key, range?: TByteRange) {
      const path = pathOf(key);
      // Open first so a missing file is an error here, not a later 'error' event on the stream.
      const stream = createReadStream(path, range ? { start: range.start, end: range.end } : {});
      await new Promise<void>((ready, fail) => {
        stream.once('open', () => ready());
        stream.once('error', (error: NodeJS.ErrnoException) =>
          fail(error.code === 'ENOENT' ? new StorageNotFoundError(key) : error),
        );
      });
      return stream as Readable;
    },
    stat: statOf,
    async delete(key) {
      await rm(pathOf(key), { force: true });
    },
    async presign() {
      return null;
    },
  };
}
