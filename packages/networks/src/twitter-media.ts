import { shown } from '@sps/safe-fetch';
import type { Got } from 'got';
import { mediaFileOf, type TMediaFile, withVideoFile } from './chunked-upload.js';
import type { TConnectorAccount, TMediaImage, TMediaVideo, TNetworkFailure } from './connector.js';
import { classifyHttpError, type TStep, truncateBody } from './http-client.js';
import { fitImage } from './image-fit.js';
import type { TFetchMedia } from './media-fetch.js';

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

  /**
   * initialize, append in segments, finalize; `finalized` is told what finalize answered and the wait is
   * left to the caller (the connector checks once per call, DESIGN invariant 10: no worker slot waits).
   */
  async function chunked(
    account: TConnectorAccount,
    file: TMediaFile,
    category: 'tweet_gif' | 'amplify_video',
    finalized: (info: TProcessingInfo | undefined) => void,
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
      finalized(done.data?.processing_info);
      return { ok: true, value: mediaId };
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

  /** Alt text for a GIF, given once X has processed it (as the blocking wait did). */
  async function describeProcessed(
    account: TConnectorAccount,
    mediaId: string,
    altText: string | undefined,
  ): Promise<TStep<true>> {
    try {
      await describe(account, mediaId, altText);
      return { ok: true, value: true };
    } catch (err) {
      return fail(classify(err));
    }
  }

  /**
   * Uploads an image. An animated GIF goes through the chunked upload (category tweet_gif) and X processes
   * it like a video: its id comes back with what finalize said (`info`), unwaited and not yet described;
   * the caller checks `videoState` once per call and describes it once ready (`describeProcessed`). Other
   * images are ready (and described) at once. https://docs.x.com/x-api/media/quickstart/media-upload-chunked
   */
  async function uploadImage(
    account: TConnectorAccount,
    image: TMediaImage,
  ): Promise<TStep<{ id: string; gif: boolean; info: TProcessingInfo | undefined }>> {
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
      let info: TProcessingInfo | undefined;
      const uploaded = await chunked(account, mediaFileOf(bytes, type), 'tweet_gif', (i) => {
        info = i;
      });
      return uploaded.ok ? { ok: true, value: { id: uploaded.value, gif: true, info } } : uploaded;
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
      return { ok: true, value: { id: mediaId, gif: false, info: undefined } };
    } catch (err) {
      return fail(classify(err));
    }
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
      {
        url: video.url,
        network: NETWORK,
        maxBytes: X_MAX_VIDEO_BYTES,
        accept: VIDEO_TYPES,
        account: account.id,
      },
      (file) =>
        chunked(account, file, 'amplify_video', (i) => {
          info = i;
        }),
    );
    return uploaded.ok ? { ok: true, value: { id: uploaded.value, info } } : uploaded;
  }

  /**
   * One STATUS read of an uploaded video or GIF: "pending -> in_progress -> failed | succeeded", look again
   * after `check_after_secs`; a media id may not go in a Post before `succeeded`.
   * https://docs.x.com/x-api/media/get-media-upload-status
   * https://developer.x.com/en/docs/media/upload-media/api-reference/get-media-upload-status
   */
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

  return { uploadImage, describeProcessed, uploadVideoUnwaited, videoStatus, videoState };
}
