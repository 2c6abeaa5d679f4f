import { setTimeout as sleep } from 'node:timers/promises';
import type { Got } from 'got';
import { mediaFileOf, type TMediaFile, withVideoFile } from './chunked-upload.js';
import type {
  TConnectorAccount,
  TMediaImage,
  TMediaVideo,
  TNetworkFailure,
  TProcessingWait,
} from './connector.js';
import { classifyHttpError, type TStep, truncateBody } from './http-client.js';
import { fitImage } from './image-fit.js';
import { shown, type TFetchMedia } from './media-fetch.js';

const NETWORK = 'X';

/**
 * Size limits of the v2 media upload: image 5 MB, GIF 15 MB, video 512 MB (amplify_video).
 * https://docs.x.com/x-api/media/introduction
 */
export const X_MAX_IMAGE_BYTES = 5 * 1024 * 1024;
export const X_MAX_GIF_BYTES = 15 * 1024 * 1024;
export const X_MAX_VIDEO_BYTES = 512 * 1024 * 1024;
/**
 * The simple upload (`POST /2/media/upload`) takes tweet_image as JPEG, PNG, WebP (and BMP, TIFF, which
 * the media fetcher does not recognise); GIFs and videos must go through the chunked upload.
 * https://docs.x.com/x-api/media/upload-media
 */
const SIMPLE_IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/webp'];
const IMAGE_TYPES = [...SIMPLE_IMAGE_TYPES, 'image/gif'];
/** Initialize's media_type enum lists video/mp4, video/webm, video/mp2t and video/quicktime. */
const VIDEO_TYPES = ['video/mp4', 'video/quicktime', 'video/webm'];
/**
 * Appends are sent as multipart/form-data (`media` as a file part, `segment_index`), the append endpoint's
 * second body form, so a segment streams from the spooled file instead of becoming a base64 string in memory.
 * 4 MB stays under the 5 MB a segment may hold, and 512 MB in 4 MB segments is 128 of the 1,000 segment
 * indexes (0-999) X allows. https://docs.x.com/x-api/media/append-media-upload
 */
const CHUNK_BYTES = 4 * 1024 * 1024;
/**
 * X says when to look again (`check_after_secs`); this bounds a wait for a video X never finishes.
 * Running out is transient: the publisher retries later with a fresh upload.
 */
export const X_PROCESSING_MAX_WAIT_MS = 10 * 60_000;
const PROCESSING_DEFAULTS = { maxWaitMs: X_PROCESSING_MAX_WAIT_MS };
const MAX_STATUS_CHECKS = 300;

interface TUploadData {
  data?: {
    id?: string;
    processing_info?: TProcessingInfo;
  };
}
interface TProcessingInfo {
  state?: 'pending' | 'in_progress' | 'succeeded' | 'failed' | string;
  check_after_secs?: number;
  error?: { code?: number; name?: string; message?: string };
}

export interface TTwitterMediaDeps {
  http: Got;
  fetchMedia: TFetchMedia;
  processingWait: TProcessingWait | undefined;
  /** APPEND segment size (tests shrink it to exercise many segments with a small file). */
  chunkBytes?: number;
}

const fail = (failure: TNetworkFailure): { ok: false; failure: TNetworkFailure } => ({ ok: false, failure });

/**
 * Uploads through the v2 media endpoints and returns media ids a Post may carry. Images go through the
 * simple upload; GIFs and videos through the chunked one (initialize, append, finalize, then status
 * until processing `succeeded`). https://docs.x.com/x-api/media/quickstart/media-upload-chunked
 */
export function createTwitterMedia(deps: TTwitterMediaDeps) {
  const { http } = deps;
  const auth = (account: TConnectorAccount) => ({ authorization: `Bearer ${account.token}` });
  // An upload creates no Post: a timeout here published nothing, so it is plainly retryable.
  const classify = (err: unknown) => {
    const { outcomeUnknown: _ignored, ...failure } = classifyHttpError(err, { network: NETWORK });
    return failure;
  };

  /** GET /2/media/upload?command=STATUS, as often as `check_after_secs` says, until succeeded or failed. */
  async function waitUntilProcessed(
    account: TConnectorAccount,
    mediaId: string,
    first: TProcessingInfo | undefined,
    url: string,
  ): Promise<TStep<string>> {
    const maxWaitMs = deps.processingWait?.maxWaitMs ?? PROCESSING_DEFAULTS.maxWaitMs;
    let info = first;
    let waited = 0;
    for (let check = 0; check < MAX_STATUS_CHECKS; check += 1) {
      if (!info || info.state === 'succeeded') return { ok: true, value: mediaId };
      if (info.state === 'failed') {
        const reason = info.error?.message ?? info.error?.name ?? 'processing failed';
        return fail({
          kind: 'rejected',
          body: truncateBody(info),
          message: `${NETWORK} could not process the media ${shown(url)}: ${reason}. Check the file and retry.`,
        });
      }
      // Tests shorten the wait with processingWait.intervalMs; production follows X's own advice.
      const pause =
        deps.processingWait?.intervalMs ?? Math.min(Math.max(info.check_after_secs ?? 1, 1), 60) * 1000;
      if (waited + pause > maxWaitMs) break;
      await sleep(pause);
      waited += pause;
      const status = await http
        .get('2/media/upload', {
          headers: auth(account),
          searchParams: { command: 'STATUS', media_id: mediaId },
        })
        .json<TUploadData>();
      info = status.data?.processing_info;
    }
    return fail({
      kind: 'transient',
      message: `${NETWORK} was still processing the media ${shown(url)} after ${Math.round(maxWaitMs / 1000)} s. It will be retried automatically.`,
    });
  }

  /**
   * initialize, append in segments, finalize, then wait for processing; with `finalized` given, it is told
   * what finalize answered and the wait is left to the caller (the connector checks once per call).
   */
  async function chunked(
    account: TConnectorAccount,
    file: TMediaFile,
    category: 'tweet_gif' | 'amplify_video',
    url: string,
    finalized?: (info: TProcessingInfo | undefined) => void,
  ): Promise<TStep<string>> {
    const chunkBytes = deps.chunkBytes ?? CHUNK_BYTES;
    try {
      // https://docs.x.com/x-api/media/initialize-media-upload
      const init = await http
        .post('2/media/upload/initialize', {
          headers: auth(account),
          json: { media_type: file.type, total_bytes: file.size, media_category: category },
        })
        .json<TUploadData>();
      const mediaId = init.data?.id;
      if (!mediaId) return fail({ kind: 'transient', message: `${NETWORK} gave no media id. Retrying.` });
      const path = `2/media/upload/${encodeURIComponent(mediaId)}`;
      for (let offset = 0, segment = 0; offset < file.size; offset += chunkBytes, segment += 1) {
        const form = new FormData();
        form.append('segment_index', String(segment));
        form.append('media', await file.slice(offset, Math.min(file.size, offset + chunkBytes)), 'media');
        await http.post(`${path}/append`, { headers: auth(account), body: form });
      }
      // https://docs.x.com/x-api/media/finalize-media-upload
      const done = await http.post(`${path}/finalize`, { headers: auth(account) }).json<TUploadData>();
      if (finalized) {
        finalized(done.data?.processing_info);
        return { ok: true, value: mediaId };
      }
      return await waitUntilProcessed(account, mediaId, done.data?.processing_info, url);
    } catch (err) {
      return fail(classify(err));
    }
  }

  async function describe(account: TConnectorAccount, mediaId: string, altText: string | undefined) {
    if (!altText) return;
    // https://docs.x.com/x-api/media/metadata-create (alt text up to 1,000 characters)
    await http.post('2/media/metadata', {
      headers: auth(account),
      json: { id: mediaId, metadata: { alt_text: { text: altText.slice(0, 1000) } } },
    });
  }

  async function uploadImage(account: TConnectorAccount, image: TMediaImage): Promise<TStep<string>> {
    // Up to the GIF limit, so an animated GIF of 5-15 MB is not refused; other images are fitted to 5 MB below.
    const downloaded = await deps.fetchMedia({
      url: image.url,
      kind: 'image',
      network: NETWORK,
      maxBytes: X_MAX_GIF_BYTES,
      accept: IMAGE_TYPES,
    });
    if (!downloaded.ok) return downloaded;
    let { bytes, type } = downloaded.value;
    if (type === 'image/gif') {
      const uploaded = await chunked(account, mediaFileOf(bytes, type), 'tweet_gif', image.url);
      if (!uploaded.ok) return uploaded;
      try {
        await describe(account, uploaded.value, image.altText);
      } catch (err) {
        return fail(classify(err));
      }
      return uploaded;
    }
    if (bytes.length > X_MAX_IMAGE_BYTES) {
      const fitted = await fitImage({ bytes, type, maxBytes: X_MAX_IMAGE_BYTES, accept: SIMPLE_IMAGE_TYPES });
      if (!fitted.ok) {
        return fail({
          kind: 'rejected',
          message: `Could not use the image ${shown(image.url)} for X: ${fitted.reason}.`,
        });
      }
      bytes = fitted.bytes;
      type = fitted.type;
    }
    try {
      // https://docs.x.com/x-api/media/upload-media
      const uploaded = await http
        .post('2/media/upload', {
          headers: auth(account),
          json: { media: bytes.toString('base64'), media_category: 'tweet_image', media_type: type },
        })
        .json<TUploadData>();
      const mediaId = uploaded.data?.id;
      if (!mediaId) return fail({ kind: 'transient', message: `${NETWORK} gave no media id. Retrying.` });
      await describe(account, mediaId, image.altText);
      return { ok: true, value: mediaId };
    } catch (err) {
      return fail(classify(err));
    }
  }

  async function uploadVideo(account: TConnectorAccount, video: TMediaVideo): Promise<TStep<string>> {
    // Spooled to a temporary file (removed afterwards) and appended segment by segment.
    // amplify_video is the category the 512 MB limit is documented for.
    return withVideoFile(
      deps.fetchMedia,
      { url: video.url, network: NETWORK, maxBytes: X_MAX_VIDEO_BYTES, accept: VIDEO_TYPES },
      (file) => chunked(account, file, 'amplify_video', video.url),
    );
  }

  /**
   * Uploads a video without waiting for X to process it: its media id and what finalize said. The caller
   * checks `videoState` once per call (DESIGN invariant 10: no worker slot waits).
   */
  async function uploadVideoUnwaited(
    account: TConnectorAccount,
    video: TMediaVideo,
  ): Promise<TStep<{ id: string; info: TProcessingInfo | undefined }>> {
    let info: TProcessingInfo | undefined;
    const uploaded = await withVideoFile(
      deps.fetchMedia,
      { url: video.url, network: NETWORK, maxBytes: X_MAX_VIDEO_BYTES, accept: VIDEO_TYPES },
      (file) =>
        chunked(account, file, 'amplify_video', video.url, (i) => {
          info = i;
        }),
    );
    return uploaded.ok ? { ok: true, value: { id: uploaded.value, info } } : uploaded;
  }

  /** One STATUS read of an uploaded video. https://docs.x.com/x-api/media/get-media-upload-status */
  async function videoStatus(
    account: TConnectorAccount,
    mediaId: string,
  ): Promise<TStep<TProcessingInfo | undefined>> {
    try {
      const status = await http
        .get('2/media/upload', {
          headers: auth(account),
          searchParams: { command: 'STATUS', media_id: mediaId },
        })
        .json<TUploadData>();
      return { ok: true, value: status.data?.processing_info };
    } catch (err) {
      return fail(classify(err));
    }
  }

  /** What a processing_info says: ready, failed (X's reason), or look again after `check_after_secs`. */
  function videoState(
    info: TProcessingInfo | undefined,
    url: string,
  ):
    | { state: 'ready' }
    | { state: 'failed'; failure: TNetworkFailure }
    | { state: 'pending'; afterMs: number } {
    if (!info || info.state === 'succeeded') return { state: 'ready' };
    if (info.state === 'failed') {
      const reason = info.error?.message ?? info.error?.name ?? 'processing failed';
      return {
        state: 'failed',
        failure: {
          kind: 'rejected',
          body: truncateBody(info),
          message: `${NETWORK} could not process the media ${shown(url)}: ${reason}. Check the file and retry.`,
        },
      };
    }
    return { state: 'pending', afterMs: Math.min(Math.max(info.check_after_secs ?? 1, 1), 60) * 1000 };
  }

  return { uploadImage, uploadVideo, uploadVideoUnwaited, videoStatus, videoState };
}
