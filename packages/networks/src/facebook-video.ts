import { createReadStream, type ReadStream } from 'node:fs';
import { type Got, HTTPError } from 'got';
import type { TConnectorAccount, TNetworkFailure, TPublishInput, TPublishOutcome } from './connector.js';
import { graphErrorCode } from './graph-api.js';
import type { TStep } from './http-client.js';
import type { TFetchMedia } from './media-fetch.js';

/**
 * Facebook Page videos as Meta's current guide has them (read 2026-11-26): the file goes to Meta with the
 * Resumable Upload API, then `POST https://graph-video.facebook.com/{version}/{page-id}/videos` with the
 * Page access token, `description` and `fbuploader_video_file_chunk=<handle>`.
 * https://developers.facebook.com/docs/video-api/guides/publishing
 *
 * The Resumable Upload API ("You will need: a Meta app ID, … a User access token"):
 * `POST /{app-id}/uploads?file_name&file_length&file_type` → `{id: "upload:<session>"}`;
 * `POST /upload:<session>` with `Authorization: OAuth <user token>`, `file_offset` and the bytes → `{h}`;
 * `GET /upload:<session>` → `{id, file_offset}` tells where an interrupted upload goes on. It documents a
 * user token, not a Page token, so the connect flow keeps the person's long-lived user token sealed next to
 * the Page token (`extra.userToken`). https://developers.facebook.com/docs/graph-api/guides/upload
 */

/** The download bound (as YouTube and TikTok); the file is spooled to disk, not held in memory. */
export const FACEBOOK_MAX_VIDEO_BYTES = 512 * 1024 * 1024;
/** Interruptions of one upload resumed within one attempt; later ones resume at the next attempt. */
const MAX_RESUMES = 3;

/**
 * Meta's answer to bytes sent at the wrong place of a video upload (code 6001, subcode 1363037, with
 * `error_data.start_offset`): asking the session where it stands and going on from there fixes it.
 */
const OFFSET_MISMATCH = 6001;
const isOffsetMismatch = (error: unknown) =>
  error instanceof HTTPError && graphErrorCode(error.response.body) === OFFSET_MISMATCH;

/** The video to send: a spooled file read from an offset, or (a fetcher without `toFile`) bytes in memory. */
interface TVideoSource {
  size: number;
  from(offset: number): Buffer | ReadStream;
  dispose(): Promise<void>;
}

/** Saved once the session exists, and again with the handle once every byte arrived. */
type TProgress = { fbSession: string; size: string; handle?: string };

export interface TFacebookVideoDeps {
  network: string;
  /** `graph.facebook.com/{version}`: the upload session. */
  graph: Got;
  /** `graph-video.facebook.com/{version}`: the publish. */
  videoHost: Got;
  /** The operator's Meta app id (`OAUTH_FACEBOOK_CLIENT_ID`). */
  appId: string | undefined;
  fetchMedia: TFetchMedia;
  /** Graph error classification for Page-token calls. */
  classify: (err: unknown) => TNetworkFailure;
  timeoutMs: number;
}

class UploadStop extends Error {
  constructor(readonly failure: TNetworkFailure) {
    super(failure.message);
  }
}

const rejected = (message: string): TPublishOutcome => ({
  ok: false,
  failure: { kind: 'rejected', message },
});

export function createFacebookVideoPublisher(deps: TFacebookVideoDeps) {
  const { network, graph, videoHost } = deps;
  // A transfer takes as long as its size needs; only a stalled connection or a silent server is an error.
  const transferTimeout = {
    request: undefined,
    connect: deps.timeoutMs,
    socket: deps.timeoutMs,
    response: deps.timeoutMs,
  };

  /**
   * Failures of the upload calls. An expired or revoked user token (code 190) cannot be refreshed here (Meta
   * has no refresh grant for it), so it is a reconnect, never `auth_expired` of the Page token.
   */
  function uploadFailure(err: unknown, account: TConnectorAccount): TNetworkFailure {
    // An upload publishes nothing: a lost answer here never needs a read-back before the next attempt.
    const { outcomeUnknown: _unknown, ...failure } = deps.classify(err);
    if (failure.kind !== 'auth_expired') return failure;
    return {
      ...failure,
      kind: 'rejected',
      message: `${network} refused the user token the video upload needs (expired or revoked). Reconnect the Facebook Page ${account.accountName} to post videos again.`,
    };
  }

  async function sessionOffset(session: string, auth: Record<string, string>): Promise<number> {
    const state = await graph.get(session, { headers: auth }).json<{ file_offset?: unknown }>();
    const offset = Number(state.file_offset);
    if (!Number.isInteger(offset) || offset < 0) {
      throw new UploadStop({ kind: 'transient', message: `${network} did not say where the upload stands.` });
    }
    return offset;
  }

  /** Sends the bytes from `from`, asking the session after each interruption, at most MAX_RESUMES times. */
  async function transfer(
    account: TConnectorAccount,
    session: string,
    source: TVideoSource,
    from: number,
    auth: Record<string, string>,
  ): Promise<string> {
    let offset = from;
    for (let attempt = 0; ; attempt += 1) {
      try {
        const answer = await graph
          .post(session, {
            headers: {
              ...auth,
              file_offset: String(offset),
              'content-type': 'application/octet-stream',
              'content-length': String(source.size - offset),
            },
            body: source.from(offset),
            timeout: transferTimeout,
          })
          .json<{ h?: unknown }>();
        if (typeof answer.h !== 'string' || answer.h === '') {
          throw new UploadStop({
            kind: 'transient',
            message: `${network} answered the upload without a handle.`,
          });
        }
        return answer.h;
      } catch (error) {
        if (error instanceof UploadStop) throw error;
        const failure = uploadFailure(error, account);
        // Only transfer trouble and a lost place are resumed; a refusal (wrong length, bad token) ends the attempt.
        const resumable = failure.kind === 'transient' || isOffsetMismatch(error);
        if (!resumable || attempt >= MAX_RESUMES) throw new UploadStop(failure);
        offset = await sessionOffset(session, auth).catch((e: unknown) => {
          throw e instanceof UploadStop ? e : new UploadStop(uploadFailure(e, account));
        });
        if (offset > source.size) {
          throw new UploadStop({
            kind: 'transient',
            message: `${network} holds more bytes than the video has.`,
          });
        }
      }
    }
  }

  /** The video as a temporary file (the shared fetcher), or as bytes from a fetcher without `toFile`. */
  async function download(url: string, account: string): Promise<TStep<TVideoSource>> {
    const request = {
      url,
      kind: 'video' as const,
      network,
      maxBytes: FACEBOOK_MAX_VIDEO_BYTES,
      // The Resumable Upload API's only video type.
      accept: ['video/mp4'],
      account,
    };
    if (deps.fetchMedia.toFile) {
      const spooled = await deps.fetchMedia.toFile(request);
      if (!spooled.ok) return spooled;
      const { path, size, dispose } = spooled.value;
      // A transfer cut short may leave its read stream open: every one is closed before the file goes.
      const opened: ReadStream[] = [];
      return {
        ok: true,
        value: {
          size,
          from: (offset) => {
            const stream = createReadStream(path, { start: offset });
            opened.push(stream);
            return stream;
          },
          dispose: async () => {
            for (const stream of opened) stream.destroy();
            await dispose();
          },
        },
      };
    }
    const fetched = await deps.fetchMedia(request);
    if (!fetched.ok) return fetched;
    const { bytes } = fetched.value;
    return {
      ok: true,
      value: { size: bytes.length, from: (offset) => bytes.subarray(offset), dispose: async () => {} },
    };
  }

  /** The handle of the uploaded file: a saved one, a saved session resumed, or a new session. */
  async function upload(
    input: TPublishInput,
    source: TVideoSource,
    userToken: string,
    appId: string,
  ): Promise<string> {
    const size = source.size;
    const auth = { authorization: `OAuth ${userToken}` };
    const saved = input.progress?.saved as TProgress | null | undefined;
    let session: string | null = null;
    let offset = 0;
    if (saved?.fbSession && Number(saved.size) === size) {
      if (saved.handle) return saved.handle;
      // An unknown or expired session is started afresh: nothing was published from it.
      const held = await sessionOffset(saved.fbSession, auth).catch(() => null);
      if (held !== null && held <= size) {
        session = saved.fbSession;
        offset = held;
      }
    }
    if (!session) {
      try {
        const started = await graph
          .post(`${encodeURIComponent(appId)}/uploads`, {
            searchParams: { file_name: 'video.mp4', file_length: size, file_type: 'video/mp4' },
            headers: auth,
          })
          .json<{ id?: unknown }>();
        if (typeof started.id !== 'string' || !started.id.startsWith('upload:')) {
          throw new UploadStop({ kind: 'transient', message: `${network} opened no upload session.` });
        }
        session = started.id;
      } catch (error) {
        if (error instanceof UploadStop) throw error;
        // No session, nothing published: even a timeout is safe to retry.
        throw new UploadStop(uploadFailure(error, input.account));
      }
      await input.progress?.save({ fbSession: session, size: String(size) } satisfies TProgress);
    }
    const handle = await transfer(input.account, session, source, offset, auth);
    await input.progress?.save({
      fbSession: session,
      size: String(size),
      handle,
    } satisfies TProgress);
    return handle;
  }

  return async function publishVideo(
    input: TPublishInput,
    pageId: string,
    url: string,
  ): Promise<TPublishOutcome> {
    const { account } = input;
    const userToken = account.extra?.userToken;
    if (!userToken) {
      return rejected(
        `${network} videos are uploaded with the Resumable Upload API, which needs the person's user token; the Page ${account.accountName} was connected before the service kept it. Reconnect the Page (Accounts → connect Facebook) to post videos; text and photos keep working.`,
      );
    }
    const expiresAt = Date.parse(account.extra?.userTokenExpiresAt ?? '');
    if (Number.isFinite(expiresAt) && expiresAt <= Date.now()) {
      return rejected(
        `${network} video uploads need the person's user token, which expired on ${new Date(expiresAt).toISOString().slice(0, 10)} (Meta's long-lived user tokens last about 60 days). Reconnect the Page ${account.accountName} to post videos; text and photos keep working.`,
      );
    }
    if (!deps.appId) {
      return rejected(
        `${network} video uploads need the Meta app id: the operator sets OAUTH_FACEBOOK_CLIENT_ID for the publisher.`,
      );
    }
    const source = await download(url, account.id);
    if (!source.ok) return source;
    let handle: string;
    try {
      handle = await upload(input, source.value, userToken, deps.appId);
    } catch (error) {
      if (error instanceof UploadStop) return { ok: false, failure: error.failure };
      return { ok: false, failure: uploadFailure(error, account) };
    } finally {
      await source.value.dispose();
    }
    try {
      const published = await videoHost
        .post(`${encodeURIComponent(pageId)}/videos`, {
          headers: { authorization: `Bearer ${account.token}` },
          json: { description: input.text, fbuploader_video_file_chunk: handle },
        })
        .json<{ id: string }>();
      await input.progress?.save(null);
      return { ok: true, remoteId: published.id, url: `https://www.facebook.com/${published.id}` };
    } catch (error) {
      return { ok: false, failure: deps.classify(error) };
    }
  };
}
