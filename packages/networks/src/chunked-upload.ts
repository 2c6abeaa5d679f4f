import { createReadStream, openAsBlob, type ReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { Readable } from 'node:stream';
import type { TStep } from './http-client.js';
import type { TFetchMedia, TMediaRequest } from './media-fetch-types.js';

/**
 * A video (or other large media) ready to send: a temporary file the fetcher spooled it to (own media read
 * from storage, URL media downloaded under the address policy and caps), read in the pieces each network
 * wants, so a publisher's memory holds one piece per upload rather than the whole file. A fetcher without
 * `toFile` (a test double) hands bytes in memory, wrapped in the same shape.
 */
export interface TMediaFile {
  size: number;
  /** MIME type from the bytes' magic numbers. */
  type: string;
  /** Bytes [start, end) as a stream (for a body sent with content-length). */
  stream(start?: number, end?: number): Readable;
  /** The whole file as a Blob backed by the file (FormData parts stream it from disk when sent). */
  blob(): Promise<Blob>;
  /** Bytes [start, end) as a file-backed Blob: a FormData part that streams from disk (X's APPEND). */
  slice(start: number, end: number): Promise<Blob>;
  /** Consecutive pieces of `pieceBytes` (the last holds the rest); one piece in memory at a time. */
  pieces(pieceBytes: number): AsyncGenerator<{ index: number; offset: number; bytes: Buffer }>;
  /** Pieces by explicit byte ranges (LinkedIn's uploadInstructions, TikTok's last chunk). */
  range(start: number, end: number): Promise<Buffer>;
  /** Removes the temporary file and closes every stream still open; safe to call twice. */
  dispose(): Promise<void>;
}

function fromFile(path: string, size: number, type: string, remove: () => Promise<void>): TMediaFile {
  const opened = new Set<ReadStream>();
  let whole: Promise<Blob> | undefined;
  const blob = () => {
    whole ??= openAsBlob(path, { type });
    return whole;
  };
  async function range(start: number, end: number): Promise<Buffer> {
    const handle = await open(path, 'r');
    try {
      const bytes = Buffer.allocUnsafe(Math.max(0, end - start));
      let filled = 0;
      while (filled < bytes.length) {
        const { bytesRead } = await handle.read(bytes, filled, bytes.length - filled, start + filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      return bytes.subarray(0, filled);
    } finally {
      await handle.close();
    }
  }
  return {
    size,
    type,
    stream(start = 0, end = size) {
      // createReadStream's `end` is inclusive; an empty range is an empty stream.
      if (end <= start) return Readable.from([]);
      const stream = createReadStream(path, { start, end: end - 1, highWaterMark: 256 * 1024 });
      opened.add(stream);
      stream.once('close', () => opened.delete(stream));
      return stream;
    },
    blob,
    slice: async (start, end) => (await blob()).slice(start, end, type),
    async *pieces(pieceBytes) {
      for (let offset = 0, index = 0; offset < size; offset += pieceBytes, index += 1) {
        yield { index, offset, bytes: await range(offset, Math.min(size, offset + pieceBytes)) };
      }
    },
    range,
    async dispose() {
      for (const stream of opened) stream.destroy();
      opened.clear();
      await remove();
    },
  };
}

/** Bytes already in memory (an image, or a fetcher without `toFile`) in the same shape. */
export function mediaFileOf(bytes: Buffer, type: string): TMediaFile {
  return {
    size: bytes.length,
    type,
    stream: (start = 0, end = bytes.length) => Readable.from([bytes.subarray(start, end)]),
    blob: async () => new Blob([bytes], { type }),
    slice: async (start, end) => new Blob([bytes.subarray(start, end)], { type }),
    async *pieces(pieceBytes) {
      for (let offset = 0, index = 0; offset < bytes.length; offset += pieceBytes, index += 1) {
        yield { index, offset, bytes: bytes.subarray(offset, offset + pieceBytes) };
      }
    },
    range: async (start, end) => bytes.subarray(start, end),
    dispose: async () => undefined,
  };
}

/**
 * A video as a file: the fetcher's `toFile` (same address policy, redirects, caps, type checks as the
 * in-memory fetch), else its bytes. The caller owns the result and must `dispose` it in a `finally`.
 */
export async function openVideoFile(
  fetchMedia: TFetchMedia,
  request: Omit<TMediaRequest, 'kind'>,
): Promise<TStep<TMediaFile>> {
  if (fetchMedia.toFile) {
    const spooled = await fetchMedia.toFile({ ...request, kind: 'video' });
    if (!spooled.ok) return spooled;
    const { path, size, type, dispose } = spooled.value;
    return { ok: true, value: fromFile(path, size, type, dispose) };
  }
  const fetched = await fetchMedia({ ...request, kind: 'video' });
  if (!fetched.ok) return fetched;
  return { ok: true, value: mediaFileOf(fetched.value.bytes, fetched.value.type) };
}

/** Runs `use` on the opened video and removes its temporary file afterwards, on failure too. */
export async function withVideoFile<T>(
  fetchMedia: TFetchMedia,
  request: Omit<TMediaRequest, 'kind'>,
  use: (file: TMediaFile) => Promise<TStep<T>>,
): Promise<TStep<T>> {
  const opened = await openVideoFile(fetchMedia, request);
  if (!opened.ok) return opened;
  try {
    return await use(opened.value);
  } finally {
    await opened.value.dispose();
  }
}

/**
 * An MP4's `moov` box alone (found by walking the top-level box headers, ISO/IEC 14496-12 §4.2), so its
 * duration and size can be read without the media data; null when there is none or it is over `cap`.
 */
export async function mp4MoovOf(file: TMediaFile, cap = 32 * 1024 * 1024): Promise<Buffer | null> {
  let offset = 0;
  for (let boxes = 0; boxes < 1000 && offset + 8 <= file.size; boxes += 1) {
    const head = await file.range(offset, Math.min(file.size, offset + 16));
    let size = head.readUInt32BE(0);
    const name = head.toString('latin1', 4, 8);
    if (size === 1 && head.length >= 16) size = Number(head.readBigUInt64BE(8));
    else if (size === 0) size = file.size - offset;
    if (size < 8) return null;
    if (name === 'moov') return size > cap ? null : file.range(offset, offset + size);
    offset += size;
  }
  return null;
}

/**
 * got timeouts for a transfer: it takes as long as its size needs; only a stalled connection or a silent
 * server is an error (a whole-request bound would fail a large video on a slow link).
 */
export const transferTimeout = (timeoutMs: number) => ({
  request: undefined,
  connect: timeoutMs,
  socket: timeoutMs,
  response: timeoutMs,
});

/**
 * An image (fetched, fitted to the network by the fetcher, small) or a video (spooled to a file) in one
 * shape, for connectors that send both the same way (a multipart file part). Dispose it after the send.
 */
export async function openMediaFile(
  fetchMedia: TFetchMedia,
  request: TMediaRequest,
): Promise<TStep<TMediaFile>> {
  if (request.kind === 'video') return openVideoFile(fetchMedia, request);
  const fetched = await fetchMedia(request);
  if (!fetched.ok) return fetched;
  return { ok: true, value: mediaFileOf(fetched.value.bytes, fetched.value.type) };
}
