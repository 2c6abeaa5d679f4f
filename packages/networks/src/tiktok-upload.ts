import got from 'got';
import { type TMediaFile, transferTimeout } from './chunked-upload.js';

// FILE_UPLOAD chunk rules, https://developers.tiktok.com/doc/content-posting-api-media-transfer-guide
// (read 2026-11-24): chunks of 5 MB to 64 MB sent in order, `total_chunk_count` = video size / chunk size
// rounded down (the last chunk takes the trailing bytes, up to 128 MB), a video under 5 MB is one chunk of
// its own size, at most 1000 chunks; each chunk is a PUT with Content-Type, Content-Length and
// `Content-Range: bytes first-last/total`.
export const TIKTOK_MIN_CHUNK = 5 * 1024 * 1024;
export const TIKTOK_MAX_CHUNK = 64 * 1024 * 1024;
/** 10 MB: a lost chunk costs little to resend and a 512 MB video stays far below 1000 chunks. */
const CHUNK = 10 * 1024 * 1024;

export interface TChunkPlan {
  chunkSize: number;
  count: number;
}

/** `preferred` (tests shrink it) is kept within TikTok's 5-64 MB. */
export function planChunks(size: number, preferred = CHUNK): TChunkPlan {
  const chunk = Math.min(TIKTOK_MAX_CHUNK, Math.max(TIKTOK_MIN_CHUNK, preferred));
  if (size <= chunk) return { chunkSize: size, count: 1 };
  return { chunkSize: chunk, count: Math.floor(size / chunk) };
}

/** Sends every chunk in order; the last one carries the remainder. Resolves with the error that stopped it. */
export async function uploadChunks(
  uploadUrl: string,
  file: TMediaFile,
  plan: TChunkPlan,
  timeoutMs = 15_000,
): Promise<{ ok: true } | { ok: false; error: unknown }> {
  for (let index = 0; index < plan.count; index += 1) {
    const first = index * plan.chunkSize;
    const last = index === plan.count - 1 ? file.size - 1 : first + plan.chunkSize - 1;
    try {
      // Streamed from the spooled file with its length: one chunk is never held whole in memory.
      await got.put(uploadUrl, {
        body: file.stream(first, last + 1),
        headers: {
          'content-type': file.type,
          'content-length': String(last + 1 - first),
          'content-range': `bytes ${first}-${last}/${file.size}`,
        },
        retry: { limit: 0 },
        followRedirect: false,
        timeout: transferTimeout(timeoutMs),
      });
    } catch (error) {
      return { ok: false, error };
    }
  }
  return { ok: true };
}
