import { createHash } from 'node:crypto';
import { youtubeDescription as sanitize, youtubeTitle as titleOf } from '@sps/core';
import { HTTPError } from 'got';
import { openVideoFile, type TMediaFile, transferTimeout } from './chunked-upload.js';
import { findYoutubeComment } from './comment-readback.js';
import type {
  TConnectorAccount,
  TConnectorOptions,
  TDeleteOutcome,
  TFindOutcome,
  TNetworkConnector,
  TNetworkFailure,
  TPublishedProbe,
  TPublishInput,
  TPublishOutcome,
  TRemoteRef,
} from './connector.js';
import { classifyHttpError, createHttpClient } from './http-client.js';
import { createMediaFetcher } from './media-fetch.js';
import { YOUTUBE_COMMENTS_PATH, youtubeComment } from './network-comments.js';
import { quotaFailure } from './youtube-quota.js';

// YouTube Data API v3, read 2026-11-24:
// https://developers.google.com/youtube/v3/docs/videos/insert (title at most 100 characters, description at
//   most 5000 bytes, neither may contain < or >)
// https://developers.google.com/youtube/v3/guides/using_resumable_upload_protocol (session in Location; an
//   interrupted upload asks `Content-Range: bytes */TOTAL`, 308 + `Range: bytes=0-N` says what arrived,
//   200/201 that the video exists; the rest is sent from N+1)

const DEFAULT_BASE_URL = 'https://www.googleapis.com';
const NETWORK = 'YouTube';
const DESCRIPTION_MAX_BYTES = 5000;
/**
 * YouTube takes files up to 256 GB; this service stops at 4 GB, the largest video a plan may upload to the
 * media library (MEDIA_LIMITS). The file is spooled to disk and sent in chunks, never held in memory.
 */
const MAX_VIDEO_BYTES = 4 * 1024 * 1024 * 1024;
/** 8 MiB chunks by default; every chunk but the last must be a multiple of 256 KiB. */
const RESUMABLE_UNIT = 256 * 1024;
const resumableChunkBytes = (preferred = 32 * RESUMABLE_UNIT) =>
  Math.max(1, Math.floor(preferred / RESUMABLE_UNIT)) * RESUMABLE_UNIT;
/** Resumes within one attempt after an interrupted transfer; beyond that the next attempt resumes. */
const MAX_RESUMES = 3;

class StepFailure extends Error {
  constructor(readonly failure: TNetworkFailure) {
    super(failure.message);
  }
}

function classify(error: unknown): TNetworkFailure {
  if (error instanceof StepFailure) return error.failure;
  return quotaFailure(error, classifyHttpError(error, { network: NETWORK }), NETWORK);
}

// The title and description (with `<` and `>` replaced) come from @sps/core's youtube-text, which the
// dashboard's preview uses too.

interface TVideo {
  id?: string;
  status?: { privacyStatus?: string };
}

/** Saved once the session exists: the session URL is the upload, and it can create at most one video. */
type TProgress = { session: string; size: string; text: string };

/** The session carries the title and description it was opened with: an edited post needs a new one. */
const digest = (text: string) => createHash('sha256').update(text).digest('base64url');

export function createYoutubeConnector(options: TConnectorOptions = {}): TNetworkConnector {
  const timeoutMs = options.timeoutMs ?? 15_000;
  const http = createHttpClient(options.baseUrl ?? DEFAULT_BASE_URL, timeoutMs);
  const fetchMedia = options.fetchMedia ?? createMediaFetcher();
  const headers = (account: TConnectorAccount) => ({ authorization: `Bearer ${account.token}` });
  /** Resumable chunk size: a multiple of 256 KiB (tests shrink it with `uploadChunkBytes`). */
  const chunkBytes = resumableChunkBytes(options.uploadChunkBytes);

  async function startSession(
    account: TConnectorAccount,
    text: string,
    size: number,
    type: string,
  ): Promise<string> {
    const response = await http.post('upload/youtube/v3/videos', {
      searchParams: { uploadType: 'resumable', part: 'snippet,status' },
      json: {
        snippet: { title: titleOf(text), description: sanitize(text) },
        status: { privacyStatus: 'public', selfDeclaredMadeForKids: false },
      },
      headers: {
        ...headers(account),
        'x-upload-content-length': String(size),
        'x-upload-content-type': type,
      },
    });
    const location = response.headers.location;
    if (!location) {
      throw new StepFailure({ kind: 'transient', message: `${NETWORK} opened no upload session. Retrying.` });
    }
    return new URL(location, options.baseUrl ?? DEFAULT_BASE_URL).toString();
  }

  /**
   * Asks the session how much arrived: the video when it is complete, the next byte to send when not,
   * or null when the session is gone (expired or never completed: a new one cannot duplicate a video).
   */
  async function querySession(
    account: TConnectorAccount,
    session: string,
    size: number,
  ): Promise<{ done: TVideo } | { offset: number } | null> {
    const response = await http.put(new URL(session), {
      headers: { ...headers(account), 'content-range': `bytes */${size}`, 'content-length': '0' },
      throwHttpErrors: false,
    });
    if (response.statusCode === 200 || response.statusCode === 201) return { done: response.body as TVideo };
    if (response.statusCode === 404 || response.statusCode === 410) return null;
    if (response.statusCode === 308) {
      const range = /bytes=0-(\d+)/.exec(String(response.headers.range ?? ''));
      return { offset: range ? Number(range[1]) + 1 : 0 };
    }
    throw new HTTPError(response);
  }

  /**
   * Sends the file from `offset` in chunks of `chunkBytes` (a multiple of 256 KiB, as the resumable protocol
   * requires of every chunk but the last), each streamed from the spooled file with its Content-Range; a
   * 308 answer's Range says where the next chunk starts. After an interruption the session is asked where it
   * stands, at most MAX_RESUMES times. https://developers.google.com/youtube/v3/guides/using_resumable_upload_protocol
   */
  async function transfer(
    account: TConnectorAccount,
    session: string,
    file: TMediaFile,
    from: number,
  ): Promise<TVideo> {
    let offset = from;
    for (let attempt = 0; ; ) {
      const end = Math.min(file.size, offset + chunkBytes);
      try {
        const response = await http.put(new URL(session), {
          body: file.stream(offset, end),
          headers: {
            ...headers(account),
            'content-type': file.type,
            'content-length': String(end - offset),
            'content-range': `bytes ${offset}-${end - 1}/${file.size}`,
          },
          timeout: transferTimeout(timeoutMs),
        });
        if (response.statusCode !== 308) return response.body as TVideo;
        // 308: the session kept up to the byte its Range names; the next chunk starts after it.
        const kept = /bytes=0-(\d+)/.exec(String(response.headers.range ?? ''));
        const next = kept ? Number(kept[1]) + 1 : 0;
        if (next > offset) {
          offset = next;
          continue;
        }
        // No progress on a chunk: ask the session below, as after an interruption.
      } catch (error) {
        const failure = classify(error);
        // Only transfer trouble is resumed; a refusal (bad content, quota) ends the attempt.
        if (failure.kind !== 'transient' || attempt >= MAX_RESUMES)
          throw new StepFailure(withoutUnknown(failure));
      }
      attempt += 1;
      let state: Awaited<ReturnType<typeof querySession>>;
      try {
        state = await querySession(account, session, file.size);
      } catch (error) {
        throw new StepFailure(withoutUnknown(classify(error)));
      }
      if (state === null) throw new StepFailure({ kind: 'transient', message: SESSION_GONE });
      if ('done' in state) return state.done;
      if (attempt > MAX_RESUMES) {
        throw new StepFailure({
          kind: 'transient',
          message: `${NETWORK} upload keeps being interrupted. It will be resumed automatically.`,
        });
      }
      offset = state.offset;
    }
  }

  /**
   * The privacy status the upload got, as the insert answer states it (`part=status`), else read back with
   * videos.list `part=status` (https://developers.google.com/youtube/v3/docs/videos/list). A failed read
   * does not undo the upload: the video exists either way.
   */
  async function published(account: TConnectorAccount, video: TVideo): Promise<TPublishOutcome> {
    const checked = publishedOrUnconfirmed(video);
    if ('ok' in checked) return checked;
    let privacy = checked.status?.privacyStatus;
    if (!privacy) {
      privacy = await http
        .get('youtube/v3/videos', {
          searchParams: { part: 'status', id: checked.id },
          headers: headers(account),
        })
        .json<{ items?: TVideo[] }>()
        .then((body) => body.items?.[0]?.status?.privacyStatus)
        .catch(() => undefined);
    }
    return publishedAs(checked, privacy);
  }

  return {
    platform: 'youtube',
    async publish(input: TPublishInput): Promise<TPublishOutcome> {
      // A reply is a top-level comment under the video (a post's first comment).
      const { replyTo } = input;
      if (replyTo) return youtubeComment(http, { ...input, replyTo }, classify);
      const { account, text } = input;
      const source = input.media?.video;
      if (!source) {
        return {
          ok: false,
          failure: { kind: 'rejected', message: `${NETWORK} posts need a video. Add a video and retry.` },
        };
      }
      const description = sanitize(text);
      const descriptionBytes = Buffer.byteLength(description, 'utf8');
      if (descriptionBytes > DESCRIPTION_MAX_BYTES) {
        return {
          ok: false,
          failure: {
            kind: 'rejected',
            message: `${NETWORK} descriptions hold at most ${DESCRIPTION_MAX_BYTES} bytes of UTF-8; this one has ${descriptionBytes}. Shorten it and retry.`,
          },
        };
      }
      // Spooled to a temporary file (removed afterwards), sent from it chunk by chunk.
      const opened = await openVideoFile(fetchMedia, {
        url: source.url,
        network: NETWORK,
        maxBytes: MAX_VIDEO_BYTES,
        account: account.id,
      });
      if (!opened.ok) return opened;
      const file = opened.value;
      try {
        let session: string | null = null;
        let offset = 0;
        const saved = input.progress?.saved as TProgress | null | undefined;
        if (saved?.session && Number(saved.size) === file.size && saved.text === digest(text)) {
          // An earlier attempt's session: ask what it holds instead of uploading (and posting) again.
          const state = await querySession(account, saved.session, file.size).catch((error: unknown) => {
            throw new StepFailure(withoutUnknown(classify(error)));
          });
          if (state && 'done' in state) return await published(account, state.done);
          if (state) {
            session = saved.session;
            offset = state.offset;
          }
        }
        if (!session) {
          try {
            session = await startSession(account, text, file.size, file.type);
          } catch (error) {
            // No session, no video: even a timeout here is safe to retry.
            throw new StepFailure(withoutUnknown(classify(error)));
          }
          await input.progress?.save({
            session,
            size: String(file.size),
            text: digest(text),
          } satisfies TProgress);
        }
        return await published(account, await transfer(account, session, file, offset));
      } catch (error) {
        const failure = classify(error);
        // A refused upload is not resumed: the next attempt (after a fix) opens a new session.
        if (failure.kind === 'rejected') await input.progress?.save(null);
        return { ok: false, failure };
      } finally {
        await file.dispose();
      }
    },

    /**
     * A first comment is read back from the video's comment threads (comment-readback.ts). An upload is
     * never asked about: its session is saved and resumed instead (see `publish`).
     */
    async findPublished(probe: TPublishedProbe): Promise<TFindOutcome> {
      const parent = probe.root ?? probe.replyTo;
      if (parent)
        return findYoutubeComment(http, headers(probe.account), { ...probe, replyTo: parent }, classify);
      return { kind: 'cannot_tell', reason: `${NETWORK}'s API cannot be asked about an upload.` };
    },

    async delete(account: TConnectorAccount, remote: TRemoteRef): Promise<TDeleteOutcome> {
      try {
        const comment = remote.meta?.kind === 'comment';
        await http.delete(comment ? YOUTUBE_COMMENTS_PATH : 'youtube/v3/videos', {
          searchParams: { id: remote.remoteId },
          headers: headers(account),
        });
        return { ok: true };
      } catch (error) {
        if (error instanceof HTTPError && error.response.statusCode === 404) return { ok: true };
        return { ok: false, failure: classify(error) };
      }
    },
  };
}

const SESSION_GONE = `${NETWORK}'s upload session expired before the video was complete. A new upload starts on the next attempt.`;

/** With the session saved, an interrupted upload is resumed, never blindly resent: the outcome is known. */
function withoutUnknown(failure: TNetworkFailure): TNetworkFailure {
  const { outcomeUnknown: _ignored, ...rest } = failure;
  return rest;
}

/**
 * Uploads through a Google Cloud project that YouTube has not audited are locked to private whatever the
 * request asked ("All videos uploaded via the videos.insert endpoint from unverified API projects created
 * after 28 July 2020 will be restricted to private viewing mode", videos.insert): a success, with a note.
 */
function privacyNote(privacyStatus: string | undefined): Record<string, string> | undefined {
  if (!privacyStatus || privacyStatus === 'public') return undefined;
  return {
    privacyStatus,
    note:
      privacyStatus === 'private'
        ? `${NETWORK} locked the video to private: uploads from a Google Cloud project YouTube has not audited stay private. The operator can request the audit (YouTube API Services audit and quota extension form); until then, make the video public in YouTube Studio.`
        : `${NETWORK} set the video to ${privacyStatus}, not public.`,
  };
}

function publishedAs(video: TVideo & { id: string }, privacyStatus: string | undefined): TPublishOutcome {
  const meta = privacyNote(privacyStatus);
  return {
    ok: true,
    remoteId: video.id,
    url: `https://www.youtube.com/watch?v=${video.id}`,
    ...(meta ? { meta } : {}),
  };
}

function publishedOrUnconfirmed(video: TVideo): TPublishOutcome | (TVideo & { id: string }) {
  if (!video.id) {
    return {
      ok: false,
      failure: {
        kind: 'transient',
        outcomeUnknown: true,
        message: `${NETWORK} did not confirm the upload; check the channel before retrying.`,
      },
    };
  }
  return video as TVideo & { id: string };
}
