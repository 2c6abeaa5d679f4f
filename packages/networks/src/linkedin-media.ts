import type { Readable } from 'node:stream';
import got, { type Got } from 'got';
import { openVideoFile, transferTimeout } from './chunked-upload.js';
import type { TConnectorAccount, TNetworkFailure, TProcessingWait } from './connector.js';
import { classifyHttpError, type TStep, truncateBody } from './http-client.js';
import type { TFetchMedia } from './media-fetch.js';
import { type TProcessingCheck, waitForProcessing } from './processing-wait.js';

const NETWORK = 'LinkedIn';

/**
 * Images API: JPG, PNG or GIF, under 36,152,320 pixels; posts take images up to 5 MB.
 * https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/images-api
 * https://www.ayrshare.com/docs/media-guidelines/linkedin (5 MB image, 500 MB video)
 */
export const LINKEDIN_MAX_IMAGE_BYTES = 5 * 1024 * 1024;
const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif']);
/**
 * Videos API: MP4, 75 KB to 500 MB, uploaded in the parts `initializeUpload` lists (4 MB each).
 * https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/videos-api
 */
export const LINKEDIN_MAX_VIDEO_BYTES = 500 * 1024 * 1024;
/** 500 MB in 4 MB parts is 125; more instructions than that is not a plan we follow. */
const MAX_UPLOAD_PARTS = 200;

/**
 * LinkedIn documents no polling cadence; images are usually AVAILABLE within seconds, videos within
 * minutes. These bounds keep a publish from waiting forever; running out is transient (retried).
 */
export const LINKEDIN_IMAGE_WAIT = { intervalMs: 2_000, maxWaitMs: 60_000 };
const IMAGE_WAIT = LINKEDIN_IMAGE_WAIT;
export const LINKEDIN_VIDEO_WAIT = { intervalMs: 10_000, maxWaitMs: 10 * 60_000 };
const VIDEO_WAIT = LINKEDIN_VIDEO_WAIT;

type TAssetStatus = 'WAITING_UPLOAD' | 'PROCESSING' | 'AVAILABLE' | 'PROCESSING_FAILED' | string;

interface TInitImage {
  value?: { uploadUrl?: string; image?: string };
}
interface TInitVideo {
  value?: {
    video?: string;
    uploadToken?: string;
    uploadInstructions?: { uploadUrl?: string; firstByte?: number; lastByte?: number }[];
  };
}

export type TCheckedVideo = TProcessingCheck;

export interface TLinkedInMediaDeps {
  http: Got;
  headers: (account: TConnectorAccount) => Record<string, string>;
  timeoutMs: number;
  fetchMedia: TFetchMedia;
  processingWait: TProcessingWait | undefined;
}

const fail = (failure: TNetworkFailure): { ok: false; failure: TNetworkFailure } => ({ ok: false, failure });
const transient = (message: string) => fail({ kind: 'transient', message });

/** Uploads through the Images and Videos APIs; each returns the URN a post references once AVAILABLE. */
export function createLinkedInMedia(deps: TLinkedInMediaDeps) {
  const { http, headers } = deps;
  // An upload creates no post: a timeout here cannot have published anything, so it is plainly retryable.
  const classify = (err: unknown) => {
    const { outcomeUnknown: _ignored, ...failure } = classifyHttpError(err, { network: NETWORK });
    return failure;
  };

  /** The upload URL is LinkedIn's own (upload host), given by `initializeUpload`: bytes go there with the token. */
  /** A PUT of bytes in memory, or of a stream of `length` bytes (a video part read from the spooled file). */
  async function put(
    account: TConnectorAccount,
    url: string,
    body: Buffer | Readable,
    type: string,
    length = Buffer.isBuffer(body) ? body.length : 0,
  ) {
    return got.put(url, {
      body,
      headers: {
        authorization: `Bearer ${account.token}`,
        'content-type': type,
        'content-length': String(length),
      },
      timeout: Buffer.isBuffer(body)
        ? { request: Math.max(deps.timeoutMs, 60_000) }
        : transferTimeout(Math.max(deps.timeoutMs, 60_000)),
      retry: { limit: 0 },
      followRedirect: false,
    });
  }

  function statusCheck(account: TConnectorAccount, path: string, what: string) {
    return async (): Promise<TProcessingCheck> => {
      const body = await http
        .get(path, { headers: headers(account) })
        .json<{ status?: TAssetStatus; processingFailureReason?: string }>();
      if (body.status === 'AVAILABLE') return { state: 'ready' };
      if (body.status === 'PROCESSING_FAILED') {
        return {
          state: 'failed',
          failure: {
            kind: 'rejected',
            body: truncateBody(body),
            message: `${NETWORK} could not process ${what}${body.processingFailureReason ? ` (${body.processingFailureReason})` : ''}. Check the file and retry.`,
          },
        };
      }
      return { state: 'pending' };
    };
  }

  /** `wait: false`: answers the URN once the bytes are up; the connector checks it (`checkImage`). */
  async function uploadImage(
    account: TConnectorAccount,
    owner: string,
    url: string,
    opts: { wait?: boolean } = {},
  ): Promise<TStep<string>> {
    const fetched = await deps.fetchMedia({
      url,
      kind: 'image',
      network: NETWORK,
      maxBytes: LINKEDIN_MAX_IMAGE_BYTES,
    });
    if (!fetched.ok) return fetched;
    const { bytes, type } = fetched.value;
    if (!IMAGE_TYPES.has(type)) {
      return fail({
        kind: 'rejected',
        message: `${NETWORK} takes JPG, PNG or GIF images; ${url} is ${type}.`,
      });
    }
    try {
      // https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/images-api#initialize-image-upload
      const init = await http
        .post('rest/images', {
          searchParams: { action: 'initializeUpload' },
          headers: headers(account),
          json: { initializeUploadRequest: { owner } },
        })
        .json<TInitImage>();
      const image = init.value?.image;
      const uploadUrl = init.value?.uploadUrl;
      if (!image || !uploadUrl) return transient(`${NETWORK} gave no upload URL for an image. Retrying.`);
      await put(account, uploadUrl, bytes, type);
      if (opts.wait === false) return { ok: true, value: image };
      // A post may only reference the image once it is AVAILABLE.
      const ready = await waitForProcessing(
        { network: NETWORK, what: 'an image', defaults: IMAGE_WAIT, wait: deps.processingWait },
        statusCheck(account, `rest/images/${encodeURIComponent(image)}`, `the image ${url}`),
      );
      return ready.ok ? { ok: true, value: image } : ready;
    } catch (err) {
      return fail(classify(err));
    }
  }

  /**
   * `wait: false` answers the video's URN once its upload is finalized, without waiting for processing: the
   * connector then checks it once per call (`checkVideo`) so no worker slot waits (DESIGN invariant 10).
   */
  async function uploadVideo(
    account: TConnectorAccount,
    owner: string,
    url: string,
    opts: { wait?: boolean } = {},
  ): Promise<TStep<string>> {
    // Spooled to a temporary file; each part of the upload plan is streamed from it, and the file removed after.
    const opened = await openVideoFile(deps.fetchMedia, {
      url,
      network: NETWORK,
      maxBytes: LINKEDIN_MAX_VIDEO_BYTES,
      account: account.id,
    });
    if (!opened.ok) return opened;
    const file = opened.value;
    const type = file.type;
    if (type !== 'video/mp4') {
      await file.dispose();
      return fail({ kind: 'rejected', message: `${NETWORK} takes MP4 videos; ${url} is ${type}.` });
    }
    try {
      // https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/videos-api#initialize-video-upload
      const init = await http
        .post('rest/videos', {
          searchParams: { action: 'initializeUpload' },
          headers: headers(account),
          json: {
            initializeUploadRequest: {
              owner,
              fileSizeBytes: file.size,
              uploadCaptions: false,
              uploadThumbnail: false,
            },
          },
        })
        .json<TInitVideo>();
      const video = init.value?.video;
      const parts = init.value?.uploadInstructions ?? [];
      if (!video || parts.length === 0 || parts.length > MAX_UPLOAD_PARTS) {
        return transient(`${NETWORK} gave no usable upload plan for the video. Retrying.`);
      }
      const etags: string[] = [];
      for (const part of parts) {
        const first = part.firstByte ?? 0;
        const last = part.lastByte ?? file.size - 1;
        if (!part.uploadUrl || first < 0 || last < first || last >= file.size) {
          return transient(`${NETWORK} gave an upload part outside the video's bytes. Retrying.`);
        }
        const res = await put(
          account,
          part.uploadUrl,
          file.stream(first, last + 1),
          'application/octet-stream',
          last + 1 - first,
        );
        const etag = res.headers.etag;
        if (!etag) return transient(`${NETWORK} did not acknowledge a video part (no ETag). Retrying.`);
        etags.push(etag);
      }
      // The part ETags, in order, prove every byte arrived. #finalize-video-upload
      await http.post('rest/videos', {
        searchParams: { action: 'finalizeUpload' },
        headers: headers(account),
        json: {
          finalizeUploadRequest: {
            video,
            uploadToken: init.value?.uploadToken ?? '',
            uploadedPartIds: etags,
          },
        },
      });
      if (opts.wait === false) return { ok: true, value: video };
      const ready = await waitForProcessing(
        { network: NETWORK, what: 'the video', defaults: VIDEO_WAIT, wait: deps.processingWait },
        statusCheck(account, `rest/videos/${encodeURIComponent(video)}`, `the video ${url}`),
      );
      return ready.ok ? { ok: true, value: video } : ready;
    } catch (err) {
      return fail(classify(err));
    } finally {
      await file.dispose();
    }
  }

  /** One status read of an uploaded video (`GET /rest/videos/{urn}`); a failed read is classified. */
  async function checkVideo(account: TConnectorAccount, urn: string, url: string): Promise<TCheckedVideo> {
    try {
      return await statusCheck(account, `rest/videos/${encodeURIComponent(urn)}`, `the video ${url}`)();
    } catch (err) {
      return { state: 'failed', failure: classify(err) };
    }
  }

  /** One status read of an uploaded image (`GET /rest/images/{urn}`); a failed read is classified. */
  async function checkImage(account: TConnectorAccount, urn: string, url: string): Promise<TCheckedVideo> {
    try {
      return await statusCheck(account, `rest/images/${encodeURIComponent(urn)}`, `the image ${url}`)();
    } catch (err) {
      return { state: 'failed', failure: classify(err) };
    }
  }

  return { uploadImage, uploadVideo, checkVideo, checkImage };
}
