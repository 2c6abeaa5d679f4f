import got, { type Got } from 'got';
import { openMediaFile, transferTimeout } from './chunked-upload.js';
import type { TConnectorAccount, TMedia, TNetworkFailure } from './connector.js';
import { classifyHttpError, type TStep, truncateBody } from './http-client.js';
import type { TFetchMedia } from './media-fetch.js';
import { mediaFileName } from './media-file-name.js';

// Slack's file upload flow (files.upload stopped working on 2025-11-12,
// https://docs.slack.dev/reference/methods/files.upload), read 2026-11-24:
// https://docs.slack.dev/reference/methods/files.getUploadURLExternal (filename, length, alt_txt at most
//   1000 characters; answers upload_url and file_id; the bytes are POSTed to upload_url, raw or multipart)
// https://docs.slack.dev/reference/methods/files.completeUploadExternal (files [{id, title}], channel_id,
//   initial_comment, thread_ts); sharing completes asynchronously, so the message's ts is read from
//   files.info `shares` once it appears (https://github.com/slackapi/bolt-js/issues/2115, Slack's answer).

const NETWORK = 'Slack';
/** Slack takes files up to 1 GB; a video is spooled to a temporary file and streamed from it. */
const MAX_VIDEO_BYTES = 1024 * 1024 * 1024;
const MAX_IMAGE_BYTES = 50 * 1024 * 1024;
const ALT_MAX = 1000;
/** Sharing usually completes in seconds (security scans); checks are cheap (files.info is Tier 4). */
export const SLACK_SHARE_WAIT = { intervalMs: 2_000, maxWaitMs: 60_000 };

interface TSlackAnswer {
  ok?: boolean;
  error?: string;
}

interface TShares {
  public?: Record<string, { ts?: string }[]>;
  private?: Record<string, { ts?: string }[]>;
}

export interface TSlackFilesDeps {
  http: Got;
  fetchMedia: TFetchMedia;
  timeoutMs: number;
  headers: (account: TConnectorAccount) => Record<string, string>;
  /** Turns a Slack `{ ok: false }` answer into a failure. */
  answerFailure: (body: TSlackAnswer, mayHavePosted: boolean) => TNetworkFailure;
  classify: (error: unknown) => TNetworkFailure;
}

export function createSlackFiles(deps: TSlackFilesDeps) {
  const { http, headers } = deps;

  async function call<T>(
    account: TConnectorAccount,
    method: string,
    options: { form?: Record<string, string>; json?: object; searchParams?: Record<string, string> },
    mayHavePosted: boolean,
  ): Promise<TStep<T>> {
    try {
      const body = await http
        .post(method, {
          ...options,
          headers: {
            authorization: headers(account).authorization ?? '',
            ...(options.json ? { 'content-type': 'application/json; charset=utf-8' } : {}),
          },
        })
        .json<TSlackAnswer & T>();
      if (!body.ok) return { ok: false, failure: deps.answerFailure(body, mayHavePosted) };
      return { ok: true, value: body };
    } catch (error) {
      const failure = deps.classify(error);
      if (!mayHavePosted) {
        const { outcomeUnknown: _ignored, ...rest } = failure;
        return { ok: false, failure: rest };
      }
      return { ok: false, failure };
    }
  }

  /** Downloads each item and uploads it to Slack; nothing is shared yet. */
  async function upload(
    account: TConnectorAccount,
    media: TMedia,
  ): Promise<TStep<{ id: string; title: string }[]>> {
    const items = [
      ...media.images.map((image) => ({ kind: 'image' as const, url: image.url, alt: image.altText })),
      ...(media.video ? [{ kind: 'video' as const, url: media.video.url, alt: undefined }] : []),
    ];
    const files: { id: string; title: string }[] = [];
    for (const [index, item] of items.entries()) {
      // A video is spooled to a temporary file and streamed to the upload URL; the file goes right after.
      const got_ = await openMediaFile(deps.fetchMedia, {
        url: item.url,
        kind: item.kind,
        network: NETWORK,
        maxBytes: item.kind === 'video' ? MAX_VIDEO_BYTES : MAX_IMAGE_BYTES,
        account: account.id,
      });
      if (!got_.ok) return got_;
      const file = got_.value;
      try {
        const name = mediaFileName(item.url, file.type, index);
        const alt = item.alt?.slice(0, ALT_MAX);
        const slot = await call<{ upload_url?: string; file_id?: string }>(
          account,
          'files.getUploadURLExternal',
          {
            form: { filename: name, length: String(file.size), ...(alt ? { alt_txt: alt } : {}) },
          },
          false,
        );
        if (!slot.ok) return slot;
        const { upload_url: uploadUrl, file_id: fileId } = slot.value;
        if (!uploadUrl || !fileId) {
          return {
            ok: false,
            failure: { kind: 'transient', message: `${NETWORK} gave no upload URL. Retrying.` },
          };
        }
        try {
          // https://docs.slack.dev/messaging/working-with-files/#uploading_files: the raw bytes POSTed to upload_url.
          await got.post(uploadUrl, {
            body: file.stream(),
            headers: { 'content-type': file.type, 'content-length': String(file.size) },
            retry: { limit: 0 },
            followRedirect: false,
            timeout: transferTimeout(deps.timeoutMs),
          });
        } catch (error) {
          // An uploaded file that is never completed is never shared: safe to retry.
          const { outcomeUnknown: _ignored, ...failure } = classifyHttpError(error, { network: NETWORK });
          return { ok: false, failure };
        }
        files.push({ id: fileId, title: name });
      } finally {
        await file.dispose();
      }
    }
    return { ok: true, value: files };
  }

  /** Shares the uploaded files in one message whose text is `comment`. */
  async function complete(
    account: TConnectorAccount,
    files: { id: string; title: string }[],
    channel: string,
    comment: string,
    threadTs: string | undefined,
  ): Promise<TStep<true>> {
    const done = await call(
      account,
      'files.completeUploadExternal',
      {
        json: {
          files,
          channel_id: channel,
          ...(comment ? { initial_comment: comment } : {}),
          ...(threadTs ? { thread_ts: threadTs } : {}),
        },
      },
      true,
    );
    return done.ok ? { ok: true, value: true } : done;
  }

  /**
   * One files.info read: the message's ts once the share in `channel` shows, else pending (sharing
   * completes asynchronously after files.completeUploadExternal).
   */
  async function shareCheck(
    account: TConnectorAccount,
    fileId: string,
    channel: string,
  ): Promise<
    { state: 'ready'; ts: string } | { state: 'pending' } | { state: 'failed'; failure: TNetworkFailure }
  > {
    try {
      const body = await http
        .get('files.info', {
          searchParams: { file: fileId },
          headers: { authorization: headers(account).authorization ?? '' },
        })
        .json<TSlackAnswer & { file?: { shares?: TShares } }>();
      if (!body.ok) {
        const failure = deps.answerFailure(body, false);
        return { state: 'failed', failure: { ...failure, body: truncateBody(body) } };
      }
      const shares = body.file?.shares;
      const ts = shares?.public?.[channel]?.[0]?.ts ?? shares?.private?.[channel]?.[0]?.ts;
      return ts ? { state: 'ready', ts } : { state: 'pending' };
    } catch (error) {
      const { outcomeUnknown: _ignored, ...failure } = deps.classify(error);
      return { state: 'failed', failure };
    }
  }

  return { upload, complete, shareCheck };
}
