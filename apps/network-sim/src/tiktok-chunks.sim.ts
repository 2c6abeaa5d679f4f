// TikTok's FILE_UPLOAD rules (https://developers.tiktok.com/doc/content-posting-api-media-transfer-guide,
// read 2026-11-24), enforced on the init call and on each chunk PUT.
const MB = 1024 * 1024;
const MIN_CHUNK = 5 * MB;
const MAX_CHUNK = 64 * MB;
const MAX_LAST_CHUNK = 128 * MB;
const MAX_VIDEO = 4 * 1024 * MB;

export interface TUploadPlan {
  size: number;
  chunkSize: number;
  count: number;
}

/** The init call's `video_size`, `chunk_size` and `total_chunk_count`, or why TikTok refuses them. */
export function checkChunkPlan(size: unknown, chunkSize: unknown, count: unknown): TUploadPlan | string {
  if (typeof size !== 'number' || !Number.isInteger(size) || size <= 0 || size > MAX_VIDEO) {
    return 'video_size is invalid';
  }
  if (typeof chunkSize !== 'number' || !Number.isInteger(chunkSize) || chunkSize <= 0) {
    return 'chunk_size is invalid';
  }
  if (size < MIN_CHUNK && chunkSize !== size) {
    return 'a video under 5 MB must be uploaded whole (chunk_size equal to video_size)';
  }
  if (size >= MIN_CHUNK && (chunkSize < MIN_CHUNK || chunkSize > MAX_CHUNK)) {
    return 'chunk_size must be between 5 MB and 64 MB';
  }
  const expected = Math.floor(size / chunkSize);
  if (count !== expected || expected < 1 || expected > 1000) {
    return `total_chunk_count must be video_size / chunk_size rounded down (${expected})`;
  }
  if (size - chunkSize * (expected - 1) > MAX_LAST_CHUNK) return 'the final chunk would exceed 128 MB';
  return { size, chunkSize, count: expected };
}

/** A chunk PUT must be the next range in order, its length matching its Content-Range. */
export function chunkProblem(
  upload: TUploadPlan & { next: number },
  contentRange: string,
  length: number,
): string | undefined {
  const match = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(contentRange);
  if (!match) return 'Content-Range must be "bytes first-last/total"';
  const [first, last, total] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (total !== upload.size) return 'Content-Range total does not match video_size';
  if (upload.next >= upload.count) return 'every chunk was already uploaded';
  const expectedFirst = upload.next * upload.chunkSize;
  const expectedLast =
    upload.next === upload.count - 1 ? upload.size - 1 : expectedFirst + upload.chunkSize - 1;
  if (first !== expectedFirst || last !== expectedLast) {
    return `chunks must be uploaded in order: expected bytes ${expectedFirst}-${expectedLast}`;
  }
  if (length !== last - first + 1) return 'the body length does not match Content-Range';
  return undefined;
}
