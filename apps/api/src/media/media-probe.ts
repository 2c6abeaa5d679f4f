import type { Readable } from 'node:stream';
import { mp4DisplaySize, mp4DurationSeconds } from '@sps/core';
import type { TStorage } from '@sps/storage';
import sharp from 'sharp';

/** Largest `moov` box read to find a video's duration (real ones are kilobytes to a few megabytes). */
const MAX_MOOV_BYTES = 32 * 1024 * 1024;
/** Top-level boxes walked before giving up (ftyp, free, mdat, moov, ... in any order). */
const MAX_TOP_BOXES = 64;

async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Width and height from an image's first bytes (sharp reads the header only). */
export async function imageSize(head: Buffer): Promise<{ width: number | null; height: number | null }> {
  try {
    const meta = await sharp(head, { animated: true, failOn: 'none' }).metadata();
    // For an animated image sharp reports the height of all frames stacked; pageHeight is one frame.
    return { width: meta.width ?? null, height: meta.pageHeight ?? meta.height ?? null };
  } catch {
    return { width: null, height: null };
  }
}

export interface TVideoHeader {
  durationS: number | null;
  width: number | null;
  height: number | null;
}

const UNKNOWN: TVideoHeader = { durationS: null, width: null, height: null };

/**
 * An MP4/MOV's duration and display size from its `moov` box, read from the store by ranges: the top-level
 * boxes are walked by their 16-byte headers (the `moov` may sit after gigabytes of `mdat`), then only `moov`
 * is read.
 */
export async function mp4Header(storage: TStorage, key: string, size: number): Promise<TVideoHeader> {
  let offset = 0;
  for (let i = 0; i < MAX_TOP_BOXES && offset + 8 <= size; i += 1) {
    const header = await collect(
      await storage.get(key, { start: offset, end: Math.min(offset + 15, size - 1) }),
    );
    if (header.length < 8) return UNKNOWN;
    let boxSize = header.readUInt32BE(0);
    const type = header.toString('latin1', 4, 8);
    if (boxSize === 1) {
      if (header.length < 16) return UNKNOWN;
      boxSize = Number(header.readBigUInt64BE(8));
    } else if (boxSize === 0) {
      boxSize = size - offset;
    }
    if (boxSize < 8) return UNKNOWN;
    if (type === 'moov') {
      if (boxSize > MAX_MOOV_BYTES) return UNKNOWN;
      const moov = await collect(
        await storage.get(key, { start: offset, end: Math.min(offset + boxSize, size) - 1 }),
      );
      // The size a player shows (a portrait phone video is stored as landscape frames plus a quarter turn): the
      // one the networks' aspect rules and the composer's fitness look at.
      const dimensions = mp4DisplaySize(moov);
      return {
        durationS: mp4DurationSeconds(moov),
        width: dimensions?.width ?? null,
        height: dimensions?.height ?? null,
      };
    }
    offset += boxSize;
  }
  return UNKNOWN;
}
