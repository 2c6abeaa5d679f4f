import { shown } from '@sps/safe-fetch';
import type { Got } from 'got';
import { aspectRatioFromText, aspectRatioText } from './bluesky-aspect-ratio.js';
import {
  BLUESKY_VIDEO_WAIT,
  type createBlueskyMedia,
  type TBlueskyDownload,
  type TBlueskyMediaSession,
} from './bluesky-media.js';
import type { TProcessingWait, TPublishProgress } from './connector.js';
import { runToEnd, stillProcessing, type TStepResult, waitSince } from './processing-step.js';

const NETWORK = 'Bluesky';

/** The segment's progress while the video service processes its video. */
export const BLUESKY_JOB_KEY = 'bskyJobId';
/** The video's aspect ratio (`width:height`), kept with the job: a resumed call does not download the video. */
export const BLUESKY_ASPECT_KEY = 'bskyAspectRatio';

/** Whether a call resumes a video job an earlier call started (its video is then not downloaded again). */
export const resumesVideoJob = (progress: TPublishProgress | undefined) =>
  Boolean(progress?.saved?.[BLUESKY_JOB_KEY]);

/**
 * The video's embed once Bluesky's video service has processed it: uploaded on the first call, then one
 * `app.bsky.video.getJobStatus` read per call, with the job id and the wait's start saved in the segment's
 * progress (no worker slot waits, DESIGN invariant 10). The progress is cleared before the embed is
 * answered: the createRecord that follows may write the post, so an interrupted one is read back (at the
 * segment's record key), never resumed into a second post. A job past the deadline, or one the service
 * failed, is over: the retry uploads afresh, and the service answers a video it already processed with
 * its blob (already_exists). Direct calls without progress check in memory and sleep between checks.
 * https://docs.bsky.app/docs/tutorials/video (poll the job until it hands back the blob)
 * https://docs.bsky.app/docs/api/app-bsky-video-get-job-status ("All values not listed as a known value
 * indicate that the job is in process": JOB_STATE_COMPLETED and JOB_STATE_FAILED are final)
 */
export function createBlueskyVideoStep(
  media: ReturnType<typeof createBlueskyMedia>,
  wait: TProcessingWait | undefined,
) {
  return async function videoReady(
    progress: TPublishProgress | undefined,
    http: Got,
    s: TBlueskyMediaSession,
    video: TBlueskyDownload | undefined,
    url: string,
  ): Promise<TStepResult<Record<string, unknown>>> {
    return runToEnd<Record<string, unknown>>(progress, async (kept) => {
      const saved = kept.saved?.[BLUESKY_JOB_KEY] ? kept.saved : null;
      let jobId = saved?.[BLUESKY_JOB_KEY];
      const aspectRatio = video ? video.aspectRatio : aspectRatioFromText(saved?.[BLUESKY_ASPECT_KEY]);
      if (!jobId) {
        if (!video) {
          return {
            kind: 'failed',
            failure: { kind: 'transient', message: `${NETWORK} video was not downloaded.` },
          };
        }
        const started = await media.startVideo(http, s, video);
        if (!started.ok) return { kind: 'failed', failure: started.failure };
        if (started.value.blob) {
          return { kind: 'ready', value: media.videoEmbedOf(started.value.blob, aspectRatio) };
        }
        jobId = started.value.jobId ?? '';
      }
      // A read that throws (the service, not the video) keeps the progress: the retry asks about the same job.
      const found = await media.videoJob(jobId, url);
      const since = waitSince(saved);
      const next: TStepResult<Record<string, unknown>> =
        found.state === 'ready'
          ? { kind: 'ready', value: media.videoEmbedOf(found.blob, aspectRatio) }
          : found.state === 'failed'
            ? { kind: 'failed', failure: found.failure }
            : stillProcessing(
                { network: NETWORK, defaults: BLUESKY_VIDEO_WAIT, wait },
                since,
                `the video ${shown(url)}`,
              );
      if (next.kind !== 'pending') {
        if (saved) await kept.save(null);
        return next;
      }
      if (!saved) {
        await kept.save({
          [BLUESKY_JOB_KEY]: jobId,
          waitSince: String(since),
          ...(aspectRatio ? { [BLUESKY_ASPECT_KEY]: aspectRatioText(aspectRatio) } : {}),
        });
      }
      return next;
    });
  };
}
