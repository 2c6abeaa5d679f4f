import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { mediaTypeProblem, SNIFF_BYTES, sniffMedia } from '@sps/core';
import { MediaRefusal, shown } from '@sps/safe-fetch';
import type { TStep } from './http-client.js';
import type { TSpooledMedia } from './media-fetch-types.js';
import type { TSpoolLease, TSpoolRefusal } from './spool-budget.js';

// The media fetcher's limits on a body, wherever it comes from (a download, the media library): its size,
// its first bytes' type, and its share of the spool disk budget.

/** How soon a video refused for a full spool budget is tried again (others' uploads take minutes). */
export const SPOOL_FULL_RETRY_MS = 30_000;

/** Holds `total` bytes on the lease or throws why not: past the whole budget is permanent, a full one is not. */
export function holdSpool(lease: TSpoolLease | undefined, total: number) {
  const refused: TSpoolRefusal | null = lease ? lease.ensure(total) : null;
  if (!refused) return;
  if (refused.kind === 'oversize') throw new MediaRefusal('rejected', refused.message);
  throw new MediaRefusal(
    'transient',
    `${refused.message}; it will be retried automatically`,
    SPOOL_FULL_RETRY_MS,
  );
}

/** Reads a body, aborting as soon as it passes `cap` or its first bytes are not the kind asked for. */
export async function readCapped(
  stream: AsyncIterable<Buffer>,
  cap: number,
  kind: 'image' | 'video',
  declared: string,
  tooLarge: string,
): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  let sniffed = false;
  for await (const chunk of stream) {
    total += chunk.length;
    if (total > cap) throw new MediaRefusal('rejected', tooLarge);
    chunks.push(chunk);
    if (!sniffed && total >= SNIFF_BYTES) {
      sniffed = true;
      const problem = mediaTypeProblem(kind, declared, sniffMedia(Buffer.concat(chunks)));
      if (problem) throw new MediaRefusal('rejected', problem);
    }
  }
  const bytes = Buffer.concat(chunks, total);
  const problem = mediaTypeProblem(kind, declared, sniffMedia(bytes));
  if (problem) throw new MediaRefusal('rejected', problem);
  return bytes;
}

/** Like `readCapped`, but writes the body to `path` as it arrives (with back-pressure); returns its size. */
export async function spoolCapped(
  stream: AsyncIterable<Buffer>,
  path: string,
  cap: number,
  declared: string,
  tooLarge: string,
  lease?: TSpoolLease,
): Promise<{ size: number; type: string }> {
  const out = createWriteStream(path, { mode: 0o600 });
  const failed = new Promise<never>((_resolve, reject) => out.once('error', reject));
  failed.catch(() => undefined);
  let head = Buffer.alloc(0);
  let total = 0;
  try {
    for await (const chunk of stream) {
      total += chunk.length;
      if (total > cap) throw new MediaRefusal('rejected', tooLarge);
      // An unannounced size is held as it arrives, so the file never outgrows its share of the disk.
      holdSpool(lease, total);
      if (head.length < SNIFF_BYTES) {
        head = Buffer.concat([head, chunk.subarray(0, SNIFF_BYTES - head.length)]);
        if (head.length >= SNIFF_BYTES) {
          const problem = mediaTypeProblem('video', declared, sniffMedia(head));
          if (problem) throw new MediaRefusal('rejected', problem);
        }
      }
      if (!out.write(chunk)) await Promise.race([once(out, 'drain'), failed]);
    }
    await Promise.race([new Promise<void>((resolve) => out.end(resolve)), failed]);
  } catch (err) {
    out.destroy();
    throw err;
  }
  const sniffed = sniffMedia(head);
  const problem = mediaTypeProblem('video', declared, sniffed);
  if (problem) throw new MediaRefusal('rejected', problem);
  return { size: total, type: sniffed?.type ?? 'application/octet-stream' };
}

/**
 * A media library video in a filesystem store, sent from its own file (no temporary copy): the same size and
 * type checks as a spooled one; `dispose` leaves the file alone. Items are immutable and a publishing post's
 * items cannot be deleted (media_in_use), so the file stays put while it is sent.
 */
export async function inPlace(
  local: { found: true; path: string } | { found: false },
  url: string,
  network: string,
  maxBytes: number,
  accept: readonly string[] | undefined,
): Promise<TStep<TSpooledMedia>> {
  const refuse = (reason: string) => ({
    ok: false as const,
    failure: {
      kind: 'rejected' as const,
      message: `Could not use the video ${shown(url)} for ${network}: ${reason}. Fix the media URL or file and retry.`,
    },
  });
  if (!local.found) return refuse('the uploaded media item no longer exists');
  const handle = await open(local.path, 'r').catch(() => null);
  if (!handle) return refuse('the uploaded media item no longer exists');
  try {
    const { size } = await handle.stat();
    if (size > maxBytes)
      return refuse(`the file is larger than ${network} accepts for a video (${maxBytes} bytes)`);
    const head = Buffer.alloc(Math.min(size, SNIFF_BYTES));
    await handle.read(head, 0, head.length, 0);
    const sniffed = sniffMedia(head);
    const problem = mediaTypeProblem('video', '', sniffed);
    if (problem) return refuse(problem);
    const type = sniffed?.type ?? 'application/octet-stream';
    if (accept && !accept.includes(type))
      return refuse(`the file is a ${type} video, a type ${network} does not take`);
    return { ok: true, value: { path: local.path, size, type, dispose: async () => undefined } };
  } finally {
    await handle.close();
  }
}
