import type { TProcessingWait, TPublishInput } from './connector.js';
import { type createLinkedInMedia, LINKEDIN_IMAGE_WAIT, LINKEDIN_VIDEO_WAIT } from './linkedin-media.js';
import { runToEnd, stillProcessing, waitSince } from './processing-step.js';

// LinkedIn's media processing as resumable steps (DESIGN invariant 10): the Images and Videos APIs answer
// an asset's status (PROCESSING, AVAILABLE, PROCESSING_FAILED); a post may only reference AVAILABLE assets.
// https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/videos-api

const NETWORK = 'LinkedIn';

export function createLinkedInWaits(
  media: ReturnType<typeof createLinkedInMedia>,
  processingWait: TProcessingWait | undefined,
) {
  const options = { processingWait };

  /**
   * The video's URN once LinkedIn has processed it: uploaded on the first call, then checked once per call
   * with the URN and the wait's start saved in the segment's progress (no worker slot waits). The progress
   * is cleared before the URN is answered: the post call that follows may post, so an interrupted one is
   * settled by a read-back, never by resuming.
   */
  async function videoReady(input: TPublishInput, author: string, url: string) {
    const budget = { network: NETWORK, defaults: LINKEDIN_VIDEO_WAIT, wait: options.processingWait };
    return runToEnd<string>(input.progress, async (progress) => {
      const saved = progress.saved?.video ? progress.saved : null;
      let urn = saved?.video;
      if (!urn) {
        const uploaded = await media.uploadVideo(input.account, author, url, { wait: false });
        if (!uploaded.ok) return { kind: 'failed', failure: uploaded.failure };
        urn = uploaded.value;
      }
      const since = waitSince(saved);
      const found = await media.checkVideo(input.account, urn, url);
      if (found.state === 'ready') {
        if (saved) await progress.save(null);
        return { kind: 'ready', value: urn };
      }
      // A status read that failed (not the video) keeps the URN: the retry asks about the same video.
      if (found.state === 'failed' && found.failure.kind !== 'rejected') {
        return { kind: 'failed', failure: found.failure };
      }
      const next =
        found.state === 'failed'
          ? ({ kind: 'failed', failure: found.failure } as const)
          : stillProcessing(budget, since, `the video ${url}`);
      // A failed or timed-out video is uploaded afresh by the next attempt.
      if (next.kind === 'failed') {
        if (saved) await progress.save(null);
        return next;
      }
      if (!saved) await progress.save({ video: urn, waitSince: String(since) });
      return next;
    });
  }

  /**
   * The image URNs once LinkedIn has made them AVAILABLE: uploaded and checked on the first call (images are
   * usually ready at once, and then nothing is saved); those not ready are checked once per later call,
   * with the URNs and the wait's start saved in the segment's progress. Cleared before the post call.
   */
  async function imagesReady(input: TPublishInput, author: string) {
    const images = input.media?.images ?? [];
    const budget = { network: NETWORK, defaults: LINKEDIN_IMAGE_WAIT, wait: options.processingWait };
    return runToEnd<string[]>(input.progress, async (progress) => {
      const saved = progress.saved?.images ? progress.saved : null;
      let urns = saved?.images ? saved.images.split(',') : [];
      if (urns.length !== images.length) {
        urns = [];
        for (const image of images) {
          const uploaded = await media.uploadImage(input.account, author, image.url, { wait: false });
          if (!uploaded.ok) return { kind: 'failed', failure: uploaded.failure };
          urns.push(uploaded.value);
        }
      }
      const done = new Set(saved?.available ? saved.available.split(',') : []);
      for (const [i, urn] of urns.entries()) {
        if (done.has(urn)) continue;
        const found = await media.checkImage(input.account, urn, images[i]?.url ?? urn);
        if (found.state === 'failed') {
          // Only an image LinkedIn failed to process is uploaded afresh; a failed read keeps the URNs.
          if (saved && found.failure.kind === 'rejected') await progress.save(null);
          return { kind: 'failed', failure: found.failure };
        }
        if (found.state === 'ready') done.add(urn);
      }
      if (done.size === urns.length) {
        if (saved) await progress.save(null);
        return { kind: 'ready', value: urns };
      }
      const since = waitSince(saved);
      const next = stillProcessing(budget, since, 'the images');
      if (next.kind === 'failed') {
        if (saved) await progress.save(null);
        return next;
      }
      await progress.save({
        images: urns.join(','),
        available: [...done].join(','),
        waitSince: String(since),
      });
      return next;
    });
  }

  return { videoReady, imagesReady };
}
