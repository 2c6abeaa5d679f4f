import { createHash } from 'node:crypto';
import { SNIFF_BYTES, sniffMedia, type TMediaKind } from '@sps/core';

/**
 * Instagram and Threads do not receive media bytes: the container carries `image_url` / `video_url` and the
 * network fetches it after answering, the container staying IN_PROGRESS meanwhile and ending FINISHED or
 * ERROR (https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-container,
 * https://developers.facebook.com/docs/threads/troubleshooting). The simulator plays that fetch when
 * `SimState.fetchPulledMedia` is set, hashing what it received so tests compare it with the uploaded file.
 */
export type TPullFailure = 'unreachable' | 'http_status' | 'timeout' | 'too_large' | 'not_media';

export type TPull =
  | { state: 'fetching'; url: string }
  | { state: 'fetched'; url: string; bytes: number; sha256: string; type: string }
  | { state: 'failed'; url: string; reason: TPullFailure; detail: string };

export interface TPullLimits {
  timeoutMs: number;
  maxBytes: number;
}

/**
 * Fetches `url` once, hashing it as it streams (nothing is buffered beyond the first bytes sniffed), and
 * never rejects: every way it can fail is a `failed` pull. Bounded by a byte cap and a timeout covering the
 * whole download, so a slow or endless URL ends the container in ERROR rather than holding it for ever.
 */
export async function pullMedia(url: string, kind: TMediaKind, limits: TPullLimits): Promise<TPull> {
  const fail = (reason: TPullFailure, detail: string): TPull => ({ state: 'failed', url, reason, detail });
  const controller = new AbortController();
  // Aborting also ends an over-long download; this says which of the two aborted it.
  let tooLarge = false;
  const timer = setTimeout(() => controller.abort(), limits.timeoutMs);
  try {
    const res = await fetch(url, { signal: controller.signal, redirect: 'follow' });
    if (!res.ok || !res.body) {
      await res.body?.cancel().catch(() => undefined);
      return fail('http_status', `HTTP ${res.status}`);
    }
    const hash = createHash('sha256');
    let head = Buffer.alloc(0);
    let bytes = 0;
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      bytes += chunk.length;
      if (bytes > limits.maxBytes) {
        tooLarge = true;
        controller.abort();
        break;
      }
      if (head.length < SNIFF_BYTES)
        head = Buffer.concat([head, Buffer.from(chunk)]).subarray(0, SNIFF_BYTES);
      hash.update(chunk);
    }
    if (tooLarge) return fail('too_large', `more than ${limits.maxBytes} bytes`);
    const sniffed = sniffMedia(head);
    if (!sniffed || sniffed.kind !== kind) return fail('not_media', `not a ${kind}`);
    return { state: 'fetched', url, bytes, sha256: hash.digest('hex'), type: sniffed.type };
  } catch (error) {
    if (tooLarge) return fail('too_large', `more than ${limits.maxBytes} bytes`);
    if (controller.signal.aborted) return fail('timeout', `no answer within ${limits.timeoutMs} ms`);
    return fail('unreachable', error instanceof Error ? error.message : String(error));
  } finally {
    clearTimeout(timer);
  }
}

/** A pull's outcome as recorded on the published post (the failed ones never publish). */
export function pulledRecord(
  pull: TPull | undefined,
): { url: string; bytes: number; sha256: string; type: string } | null {
  return pull?.state === 'fetched'
    ? { url: pull.url, bytes: pull.bytes, sha256: pull.sha256, type: pull.type }
    : null;
}
