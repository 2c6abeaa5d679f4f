import type { Readable } from 'node:stream';

/** What is known about a stored object without reading it. */
export interface TStoredObject {
  key: string;
  size: number;
  /** Strong validator for HTTP (`ETag`), quoted. */
  etag: string;
  contentType: string | undefined;
}

/** An inclusive byte range, as HTTP `Range: bytes=start-end` means it. */
export interface TByteRange {
  start: number;
  end: number;
}

export interface TPutOptions {
  contentType?: string;
  /**
   * Called with every chunk as it passes, before it is written; may throw to abort the write (a cap on
   * the size, a type check on the first bytes). Nothing is left behind when it throws.
   */
  onChunk?: (chunk: Buffer, total: number) => void;
}

/**
 * Media bytes, streamed both ways: no implementation holds a whole object in memory. Keys are relative
 * paths of `[A-Za-z0-9._/-]` made by the service, never by callers.
 */
export interface TStorage {
  readonly kind: 'fs' | 's3';
  /** Writes the stream under `key`; the object appears whole or not at all. */
  put(key: string, body: Readable, options?: TPutOptions): Promise<TStoredObject>;
  /** The object's bytes, or the range of them. Throws `StorageNotFoundError` when missing. */
  get(key: string, range?: TByteRange): Promise<Readable>;
  /** Null when the object is missing. */
  stat(key: string): Promise<TStoredObject | null>;
  /** Removes the object; a missing object is not an error. */
  delete(key: string): Promise<void>;
  /** A time-limited URL anyone may GET the object from, where the store offers one (S3); else null. */
  presign(key: string, expiresInSeconds: number): Promise<string | null>;
  /**
   * The object's file on this machine, where the store is a directory (fs): a reader may open it in place
   * instead of copying it. Objects are written whole and renamed into place, never changed afterwards.
   */
  localPath?(key: string): string;
  /**
   * Puts the file at `file` (on this machine, not a stored object) under `key` without copying its bytes
   * where the store is a directory on the same filesystem: hard-linked into place (the caller removes its
   * own name afterwards), else copied (EXDEV, or no hard links). The file must not change afterwards. fs only.
   */
  adopt?(key: string, file: string): Promise<TStoredObject>;
  /**
   * Writes under `key` the stored objects `sources` one after the other, copied inside the store (S3
   * UploadPartCopy) instead of downloaded and sent back. Null when the server does not implement the
   * copy (remembered: later calls answer null at once); the caller then streams the bytes itself. S3 only.
   */
  compose?(key: string, sources: Array<{ key: string; size: number }>): Promise<TStoredObject | null>;
}

export class StorageNotFoundError extends Error {
  constructor(readonly key: string) {
    super(`No stored object ${key}`);
    this.name = 'StorageNotFoundError';
  }
}

const KEY = /^[A-Za-z0-9][A-Za-z0-9._-]*(\/[A-Za-z0-9][A-Za-z0-9._-]*)*$/;

/** Keys never climb out of their root (`..`, absolute paths) whatever made them. */
export function assertKey(key: string): void {
  if (key.length > 512 || !KEY.test(key) || key.split('/').some((part) => part === '..' || part === '.')) {
    throw new Error(`Invalid storage key ${JSON.stringify(key.slice(0, 80))}`);
  }
}
