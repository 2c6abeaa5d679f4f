import { pulledRecord, pullMedia, type TPull } from './media-pull.sim.js';
import type { SimState } from './sim-state.js';

/**
 * PULL_FROM_URL: TikTok answers the init with a publish id and downloads `video_url` / `photo_images`
 * afterwards, `status/fetch` saying PROCESSING_DOWNLOAD meanwhile and FAILED with a `fail_reason` when the
 * download or its checks fail (Get Post Status,
 * https://developers.tiktok.com/doc/content-posting-api-reference-get-video-status, read 2026-11-27: the
 * page's example answer is `picture_size_check_failed`; the other names below are those of its fail_reason
 * table as integrations quote it, the table itself not being in the copy read here). An unverified URL is
 * refused at init instead (`url_ownership_unverified`, an error code rather than a fail_reason).
 *
 * Which reason a given failure gets is modeled: a URL that cannot be downloaded (unreachable, HTTP error,
 * too slow) is `video_pull_failed` / `photo_pull_failed`; bytes that are not a video, or a photo that is not
 * JPEG or WebP (the photo post's formats, content-posting-api-media-transfer-guide), are
 * `file_format_check_failed`; a photo over the simulator's image cap is `picture_size_check_failed`.
 */
type TPulled = { url: string; bytes: number; sha256: string; type: string }[];
type TTiktokPullOutcome = { ok: true; pulled: TPulled } | { ok: false; failReason: string };

/** The part of a simulated publish the download moves on. */
export interface TPullTarget {
  status: string;
  failReason?: string;
  pulling?: boolean;
}

const PHOTO_TYPES = new Set(['image/jpeg', 'image/webp']);

function failReason(pull: TPull, kind: 'video' | 'image'): string | null {
  if (pull.state === 'fetched')
    return kind === 'image' && !PHOTO_TYPES.has(pull.type) ? 'file_format_check_failed' : null;
  if (pull.state !== 'failed') return null;
  if (pull.reason === 'not_media') return 'file_format_check_failed';
  if (pull.reason === 'too_large' && kind === 'image') return 'picture_size_check_failed';
  return kind === 'video' ? 'video_pull_failed' : 'photo_pull_failed';
}

/** Downloads every URL (a photo post's in parallel, as one download fails the post). Never rejects. */
async function pullForTiktok(
  sim: SimState,
  urls: string[],
  kind: 'video' | 'image',
): Promise<TTiktokPullOutcome> {
  const { timeoutMs, imageMaxBytes, videoMaxBytes } = sim.pullLimits;
  const limits = { timeoutMs, maxBytes: kind === 'video' ? videoMaxBytes : imageMaxBytes };
  const pulls = await Promise.all(urls.map((url) => pullMedia(url, kind, limits)));
  for (const pull of pulls) {
    const reason = failReason(pull, kind);
    if (reason) return { ok: false, failReason: reason };
  }
  return { ok: true, pulled: pulls.flatMap((pull) => pulledRecord(pull) ?? []) };
}

/**
 * A pulled post exists once TikTok has its media: at once unless the simulator plays the download
 * (`sim.fetchPulledMedia`); then once every URL was fetched, `post` receiving what was; a failed
 * download fails the publish with its reason instead.
 */
export function pullThenPost(
  sim: SimState,
  publish: TPullTarget,
  urls: string[],
  kind: 'video' | 'image',
  post: (pulled?: TPulled) => void,
): void {
  if (!sim.fetchPulledMedia) {
    post();
    return;
  }
  publish.pulling = true;
  void pullForTiktok(sim, urls, kind).then((outcome) => {
    publish.pulling = false;
    if (outcome.ok) {
      post(outcome.pulled);
      return;
    }
    publish.status = 'FAILED';
    publish.failReason = outcome.failReason;
  });
}
