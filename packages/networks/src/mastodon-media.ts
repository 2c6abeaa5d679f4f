import { shown } from '@sps/safe-fetch';
import { type Got, HTTPError } from 'got';
import { openMediaFile } from './chunked-upload.js';
import type { TConnectorAccount, TNetworkFailure, TProcessingWait } from './connector.js';
import { classifyHttpError, type TStep, truncateBody } from './http-client.js';
import type { TMastodonLimits } from './mastodon-instance.js';
import type { TFetchMedia } from './media-fetch.js';
import { type TProcessingCheck, waitForProcessing } from './processing-wait.js';

const NETWORK = 'Mastodon';
/**
 * Mastodon gives no polling cadence. Images are processed within the upload request since 4.0 (200);
 * video, gifv and audio answer 202 and are transcoded in the background, which takes seconds to minutes.
 * Running out is transient (the publisher retries later).
 */
const IMAGE_WAIT = { intervalMs: 1_000, maxWaitMs: 60_000 };
const VIDEO_WAIT = { intervalMs: 3_000, maxWaitMs: 10 * 60_000 };

export interface TMastodonMediaDeps {
  fetchMedia: TFetchMedia;
  processingWait: TProcessingWait | undefined;
}

export interface TMastodonMediaItem {
  url: string;
  kind: 'image' | 'video';
  altText?: string | undefined;
}

const fail = (failure: TNetworkFailure): { ok: false; failure: TNetworkFailure } => ({ ok: false, failure });

/** The longest wait for an attachment of this kind (images a minute, videos ten). */
export const mastodonProcessingBudget = (kind: TMastodonMediaItem['kind']) =>
  kind === 'image' ? IMAGE_WAIT : VIDEO_WAIT;

/**
 * One `GET /api/v1/media/:id`: 206 Partial Content while processing, 200 once processed, 422 when the
 * server could not process it. https://docs.joinmastodon.org/methods/media/#get
 */
export async function mastodonMediaState(
  http: Got,
  headers: Record<string, string>,
  id: string,
  item: TMastodonMediaItem,
): Promise<TProcessingCheck> {
  try {
    const status = await http.get(`api/v1/media/${encodeURIComponent(id)}`, { headers });
    return status.statusCode === 200 ? { state: 'ready' } : { state: 'pending' };
  } catch (err) {
    if (err instanceof HTTPError && err.response.statusCode === 422) {
      return {
        state: 'failed',
        failure: {
          kind: 'rejected',
          status: 422,
          body: truncateBody(err.response.body),
          message: `${NETWORK} could not process the ${item.kind} ${shown(item.url)}: ${truncateBody(err.response.body)}. Check the file and retry.`,
        },
      };
    }
    throw err;
  }
}

/**
 * Uploads one attachment with `POST /api/v2/media` and returns its id once the server has processed it:
 * a 202 (still processing) is checked with `GET /api/v1/media/:id` until it answers 200, because a
 * status with unprocessed media is refused (422 "Cannot attach files that have not finished processing").
 * https://docs.joinmastodon.org/methods/media/#v2
 */
export function createMastodonMedia(deps: TMastodonMediaDeps) {
  // An upload creates no status: a timeout here published nothing, so it is plainly retryable.
  const classify = (err: unknown) => {
    const { outcomeUnknown: _ignored, ...failure } = classifyHttpError(err, { network: NETWORK });
    return failure;
  };

  return async function upload(
    http: Got,
    account: TConnectorAccount,
    item: TMastodonMediaItem,
    limits: TMastodonLimits,
    /** `wait: false`: a 202 answers the id at once, marked `processing` (the connector checks it later). */
    opts: { wait?: boolean } = {},
  ): Promise<TStep<string> & { processing?: boolean }> {
    const accept = limits.supportedMimeTypes?.filter((t) => t.startsWith(`${item.kind}/`));
    // A video is spooled to a temporary file and its part streamed from disk; removed once sent.
    const opened = await openMediaFile(deps.fetchMedia, {
      url: item.url,
      kind: item.kind,
      network: NETWORK,
      maxBytes: item.kind === 'image' ? limits.imageSizeLimit : limits.videoSizeLimit,
      account: account.id,
      ...(accept && accept.length > 0 ? { accept } : {}),
    });
    if (!opened.ok) return opened;
    const file = opened.value;
    const headers = { authorization: `Bearer ${account.token}` };
    try {
      // Inside the try: the temporary file is removed whatever throws from here on.
      const res = await (async () => {
        const form = new FormData();
        const name = new URL(item.url).pathname.split('/').pop() || item.kind;
        form.append('file', await file.blob(), name);
        if (item.altText) form.append('description', item.altText.slice(0, limits.descriptionLimit));
        // https://docs.joinmastodon.org/methods/media/#v2 (multipart/form-data `file`)
        return http.post('api/v2/media', { headers, body: form });
      })().finally(() => file.dispose());
      const id = (res.body as { id?: unknown } | undefined)?.id;
      if (typeof id !== 'string' || id.length === 0) {
        return fail({ kind: 'transient', message: `${NETWORK} gave no media id. Retrying.` });
      }
      if (res.statusCode !== 202) return { ok: true, value: id };
      if (opts.wait === false) return { ok: true, value: id, processing: true };
      const check = () => mastodonMediaState(http, headers, id, item);
      const ready = await waitForProcessing(
        {
          network: NETWORK,
          what: `the ${item.kind} ${shown(item.url)}`,
          defaults: mastodonProcessingBudget(item.kind),
          wait: deps.processingWait,
        },
        check,
      );
      return ready.ok ? { ok: true, value: id } : ready;
    } catch (err) {
      return fail(classify(err));
    }
  };
}
