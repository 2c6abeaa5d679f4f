import { shown } from '@sps/safe-fetch';
import got, { type Got, HTTPError } from 'got';
import { imageAspectRatio, type TAspectRatio, videoAspectRatio } from './bluesky-aspect-ratio.js';
import { type TUploadLimits, uploadAnswerFailure, uploadLimitsFailure } from './bluesky-video-limits.js';
import { openVideoFile, type TMediaFile, transferTimeout } from './chunked-upload.js';
import type { TMedia, TNetworkFailure } from './connector.js';
import { type TStep, truncateBody } from './http-client.js';
import type { TFetchMedia } from './media-fetch.js';

const NETWORK = 'Bluesky';
/**
 * app.bsky.embed.images: up to 4 images, each blob `image/*`. The lexicon now allows 2,000,000 bytes
 * ("formerly limited to 1 MB"); PDSes that have not taken that lexicon answer BlobTooLarge above
 * 1,000,000, so images are fitted to that, which every PDS takes.
 * https://github.com/bluesky-social/atproto/blob/main/lexicons/app/bsky/embed/images.json
 */
export const BLUESKY_MAX_IMAGE_BYTES = 1_000_000;
/**
 * app.bsky.embed.video: an mp4 blob "up to 300mb, formerly limited to 100mb"; the same reasoning keeps
 * uploads at 100 MB. The video service takes MP4, MOV and WebM and writes an MP4 blob to the PDS.
 * https://github.com/bluesky-social/atproto/blob/main/lexicons/app/bsky/embed/video.json
 * https://bsky.social/about/blog/09-11-2024-video
 */
export const BLUESKY_MAX_VIDEO_BYTES = 100_000_000;
const VIDEO_TYPES = ['video/mp4', 'video/quicktime', 'video/webm'];
/** The tutorial polls the job every second; processing a long video takes minutes. */
export const BLUESKY_VIDEO_WAIT = { intervalMs: 2_000, maxWaitMs: 10 * 60_000 };
export const BLUESKY_VIDEO_SERVICE = 'https://video.bsky.app';

export interface TBlueskyDownload {
  kind: 'image' | 'video';
  /** An image's bytes (small: fitted to 1,000,000 bytes); empty for a video, which is `file`. */
  bytes: Buffer;
  /** A video spooled to a temporary file, streamed to the video service; the caller disposes it. */
  file?: TMediaFile;
  type: string;
  alt: string;
  name: string;
  /** Shown before the media loads, so the feed does not jump (app.bsky.embed.defs#aspectRatio). */
  aspectRatio?: TAspectRatio;
}

/** What a PDS session gives the media steps: the account's DID, its access token and PDS. */
export interface TBlueskyMediaSession {
  did: string;
  accessJwt: string;
  /** The PDS's own URL (from the session's DID document), for the video service's service token. */
  pdsUrl: string;
}

export interface TBlueskyMediaDeps {
  fetchMedia: TFetchMedia;
  videoServiceUrl: string;
  timeoutMs: number;
}

interface TJobStatus {
  jobId?: string;
  state?: string;
  blob?: Record<string, unknown>;
  error?: string;
  message?: string;
}

const fail = (failure: TNetworkFailure): { ok: false; failure: TNetworkFailure } => ({ ok: false, failure });

/** `did:web` of a service URL's host (a port's colon percent-encoded, https://w3c-ccg.github.io/did-method-web/). */
export const didWebOf = (url: string) => `did:web:${new URL(url).host.replace(':', '%3A')}`;

export function createBlueskyMedia(deps: TBlueskyMediaDeps) {
  const video = got.extend({
    prefixUrl: deps.videoServiceUrl.replace(/\/+$/, ''),
    retry: { limit: 0 },
    timeout: { request: Math.max(deps.timeoutMs, 60_000) },
    followRedirect: false,
    responseType: 'json',
    headers: { 'user-agent': 'social-post-service/0.1' },
  });

  /** Downloads every item before a session is used (a slow media host must not hold a PDS call). */
  async function download(media: TMedia | null, account: string): Promise<TStep<TBlueskyDownload[]>> {
    const out: TBlueskyDownload[] = [];
    for (const image of media?.images ?? []) {
      const fetched = await deps.fetchMedia({
        url: image.url,
        kind: 'image',
        network: NETWORK,
        maxBytes: BLUESKY_MAX_IMAGE_BYTES,
      });
      if (!fetched.ok) return fetched;
      const aspectRatio = await imageAspectRatio(fetched.value.bytes);
      out.push({
        kind: 'image',
        ...fetched.value,
        alt: image.altText ?? '',
        name: image.url,
        ...(aspectRatio ? { aspectRatio } : {}),
      });
    }
    if (media?.video) {
      const opened = await openVideoFile(deps.fetchMedia, {
        url: media.video.url,
        network: NETWORK,
        maxBytes: BLUESKY_MAX_VIDEO_BYTES,
        accept: VIDEO_TYPES,
        account,
      });
      if (!opened.ok) return opened;
      const file = opened.value;
      // From the MP4 header boxes only (the media data is skipped): the service keeps the picture's shape.
      const aspectRatio = await videoAspectRatio(file);
      out.push({
        kind: 'video',
        bytes: Buffer.alloc(0),
        file,
        type: file.type,
        alt: '',
        name: media.video.url,
        ...(aspectRatio ? { aspectRatio } : {}),
      });
    }
    return { ok: true, value: out };
  }

  /** com.atproto.repo.uploadBlob for each image; the embed carries alt text and aspect ratio. */
  async function imagesEmbed(http: Got, s: TBlueskyMediaSession, images: TBlueskyDownload[]) {
    const embedded = [];
    for (const d of images) {
      const uploaded = await http
        .post('xrpc/com.atproto.repo.uploadBlob', {
          headers: { authorization: `Bearer ${s.accessJwt}`, 'content-type': d.type },
          body: d.bytes,
        })
        .json<{ blob: Record<string, unknown> }>();
      embedded.push({
        alt: d.alt,
        image: uploaded.blob,
        ...(d.aspectRatio ? { aspectRatio: d.aspectRatio } : {}),
      });
    }
    return { $type: 'app.bsky.embed.images', images: embedded };
  }

  /** A short-lived token the PDS signs for another service (com.atproto.server.getServiceAuth). */
  async function serviceToken(http: Got, s: TBlueskyMediaSession, aud: string, lxm: string, seconds: number) {
    const body = await http
      .get('xrpc/com.atproto.server.getServiceAuth', {
        headers: { authorization: `Bearer ${s.accessJwt}` },
        searchParams: { aud, lxm, exp: Math.floor(Date.now() / 1000) + seconds },
      })
      .json<{ token?: string }>();
    if (!body.token) throw new Error('the PDS gave no service token');
    return body.token;
  }

  /**
   * The recommended video flow, first half: check the account's upload limits, upload to the video service
   * with a service token for the PDS's uploadBlob. Answers the blob when the service already has it, else
   * the job to check (`videoJob`, once per call: no worker slot waits, DESIGN invariant 10).
   * Network errors are thrown, so the caller can renew an expired session and classify the rest.
   * https://docs.bsky.app/docs/tutorials/video
   * https://docs.bsky.app/docs/api/app-bsky-video-upload-video
   */
  async function startVideo(
    http: Got,
    s: TBlueskyMediaSession,
    d: TBlueskyDownload,
  ): Promise<TStep<{ blob?: Record<string, unknown>; jobId?: string }>> {
    const limitsToken = await serviceToken(
      http,
      s,
      didWebOf(deps.videoServiceUrl),
      'app.bsky.video.getUploadLimits',
      60,
    );
    const limits = await video
      .get('xrpc/app.bsky.video.getUploadLimits', { headers: { authorization: `Bearer ${limitsToken}` } })
      .json<TUploadLimits>();
    // A reached daily limit is a wait (rate_limited, retried later), other refusals are final.
    const refused = uploadLimitsFailure(limits, d.file?.size ?? d.bytes.length);
    if (refused) return fail(refused);
    // 30 minutes, as the tutorial recommends: the service uses the token when it writes the blob.
    const uploadToken = await serviceToken(
      http,
      s,
      didWebOf(s.pdsUrl),
      'com.atproto.repo.uploadBlob',
      30 * 60,
    );
    let job: TJobStatus;
    try {
      // The body streamed from the spooled file with its length (https://docs.bsky.app/docs/tutorials/video).
      const res = await video
        .post('xrpc/app.bsky.video.uploadVideo', {
          searchParams: { did: s.did, name: new URL(d.name).pathname.split('/').pop() || 'video.mp4' },
          headers: {
            authorization: `Bearer ${uploadToken}`,
            'content-type': d.type,
            'content-length': String(d.file?.size ?? d.bytes.length),
          },
          body: d.file ? d.file.stream() : d.bytes,
          ...(d.file ? { timeout: transferTimeout(deps.timeoutMs) } : {}),
        })
        .json<TJobStatus & { jobStatus?: TJobStatus }>();
      job = res.jobStatus ?? res;
    } catch (err) {
      // The same video processed before: the service answers already_exists with the earlier blob.
      const body =
        err instanceof HTTPError ? (err.response.body as TJobStatus & { jobStatus?: TJobStatus }) : null;
      const known = body?.jobStatus ?? body;
      if (!known?.blob && !known?.jobId) {
        const limited = err instanceof HTTPError ? uploadAnswerFailure(known, err.response.headers) : null;
        if (limited) return fail(limited);
        throw err;
      }
      job = known;
    }
    if (job.blob) return { ok: true, value: { blob: job.blob } };
    if (job.jobId) return { ok: true, value: { jobId: job.jobId } };
    // No job: the service names the refusal in `error` (a daily limit reached between the two calls).
    return fail(
      uploadAnswerFailure(job) ?? { kind: 'transient', message: `${NETWORK} gave no video job. Retrying.` },
    );
  }

  /**
   * One app.bsky.video.getJobStatus read: JOB_STATE_COMPLETED and JOB_STATE_FAILED are final, every other
   * state means the job is still in process; a returned blob is used whatever the state (already_exists
   * fails the job but gives one). Network errors are thrown (the caller classifies them).
   * https://docs.bsky.app/docs/api/app-bsky-video-get-job-status
   */
  async function videoJob(
    jobId: string,
    name: string,
  ): Promise<
    | { state: 'ready'; blob: Record<string, unknown> }
    | { state: 'pending' }
    | { state: 'failed'; failure: TNetworkFailure }
  > {
    const status = await video
      .get('xrpc/app.bsky.video.getJobStatus', { searchParams: { jobId } })
      .json<{ jobStatus?: TJobStatus }>();
    const current = status.jobStatus;
    if (current?.blob) return { state: 'ready', blob: current.blob };
    if (current?.state === 'JOB_STATE_FAILED') {
      const limited = uploadAnswerFailure(current);
      if (limited) return { state: 'failed', failure: limited };
      return {
        state: 'failed',
        failure: {
          kind: 'rejected',
          body: truncateBody(current),
          message: `${NETWORK} could not process the video ${shown(name)}: ${current.message ?? current.error ?? 'processing failed'}. Check the file and retry.`,
        },
      };
    }
    if (current?.state === 'JOB_STATE_COMPLETED') {
      return {
        state: 'failed',
        failure: { kind: 'transient', message: `${NETWORK} gave no video blob. Retrying.` },
      };
    }
    return { state: 'pending' };
  }

  /** app.bsky.embed.video with the ratio read from the upload's header, when it had one. */
  const videoEmbedOf = (blob: Record<string, unknown>, aspectRatio?: TAspectRatio) => ({
    $type: 'app.bsky.embed.video',
    video: blob,
    ...(aspectRatio ? { aspectRatio } : {}),
  });

  return { download, imagesEmbed, startVideo, videoJob, videoEmbedOf };
}
