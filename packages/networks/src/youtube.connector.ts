import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import got, { HTTPError, RequestError } from 'got';
import type {
  TConnectorAccount,
  TConnectorOptions,
  TDeleteOutcome,
  TNetworkConnector,
  TNetworkFailure,
  TPublishInput,
  TPublishOutcome,
  TRemoteRef,
} from './connector.js';
import { classifyHttpError, createHttpClient } from './http-client.js';

const DEFAULT_BASE_URL = 'https://www.googleapis.com';
const NETWORK = 'YouTube';
const TITLE_MAX = 100;
/** Quota and upload limits come back as 403 with these reasons: waiting, not editing, fixes them. */
const QUOTA_REASONS = new Set([
  'quotaExceeded',
  'rateLimitExceeded',
  'userRateLimitExceeded',
  'uploadLimitExceeded',
]);

interface TGoogleErrorBody {
  error?: { code?: number; message?: string; errors?: { reason?: string }[] };
}

class StepFailure extends Error {
  constructor(readonly failure: TNetworkFailure) {
    super(failure.message);
  }
}

function classify(error: unknown): TNetworkFailure {
  if (error instanceof StepFailure) return error.failure;
  const failure = classifyHttpError(error, { network: NETWORK });
  const body = error instanceof HTTPError ? (error.response.body as TGoogleErrorBody | string) : undefined;
  const reasons = typeof body === 'object' ? (body.error?.errors ?? []).map((e) => e.reason) : [];
  if (failure.kind === 'rejected' && reasons.some((r) => r !== undefined && QUOTA_REASONS.has(r))) {
    return {
      ...failure,
      kind: 'rate_limited',
      message: `${NETWORK} quota or upload limit reached (${reasons.join(', ')}). The post will be retried later.`,
    };
  }
  return failure;
}

/** Steps before the bytes are sent cannot have created a video: a timeout there is safe to retry. */
function beforeUpload(error: unknown): StepFailure {
  const { outcomeUnknown: _ignored, ...failure } = classify(error);
  return new StepFailure(failure);
}

/** YouTube refuses `<` and `>` in titles and descriptions; look-alikes keep the text readable. */
function sanitize(text: string): string {
  return text.replace(/</g, '‹').replace(/>/g, '›');
}

function titleOf(text: string): string {
  const line =
    text
      .split('\n')
      .find((l) => l.trim() !== '')
      ?.trim() ?? '';
  return Array.from(sanitize(line)).slice(0, TITLE_MAX).join('') || 'Video';
}

interface TDownloaded {
  path: string;
  size: number;
  contentType: string;
  cleanup: () => Promise<void>;
}

export function createYoutubeConnector(options: TConnectorOptions = {}): TNetworkConnector {
  const timeoutMs = options.timeoutMs ?? 15_000;
  const http = createHttpClient(options.baseUrl ?? DEFAULT_BASE_URL, timeoutMs);
  const headers = (account: TConnectorAccount) => ({ authorization: `Bearer ${account.token}` });
  // Transfers take as long as their size needs; only a stalled connection or a silent server is an error.
  const transferTimeout = { request: undefined, connect: timeoutMs, socket: timeoutMs, response: timeoutMs };

  /** Spooled to disk: the upload needs the exact size up front, and videos are too big for memory. */
  async function download(url: string): Promise<TDownloaded> {
    const dir = await mkdtemp(join(tmpdir(), 'sps-youtube-'));
    const cleanup = () => rm(dir, { recursive: true, force: true });
    const path = join(dir, 'video');
    let contentType = 'video/*';
    try {
      const source = got.stream(url, { timeout: transferTimeout, retry: { limit: 0 } });
      source.on('response', (response: { headers: Record<string, string | string[] | undefined> }) => {
        const type = response.headers['content-type'];
        if (typeof type === 'string' && /^(video\/|application\/octet-stream)/.test(type)) contentType = type;
      });
      await pipeline(source, createWriteStream(path));
      return { path, size: (await stat(path)).size, contentType, cleanup };
    } catch (error) {
      await cleanup();
      if (error instanceof HTTPError && error.response.statusCode < 500) {
        throw new StepFailure({
          kind: 'rejected',
          status: error.response.statusCode,
          message: `Could not download the video for ${NETWORK} (HTTP ${error.response.statusCode} from the media URL). Fix the media and retry.`,
        });
      }
      const reason = error instanceof RequestError ? error.code : 'unknown error';
      throw new StepFailure({
        kind: 'transient',
        message: `Could not download the video for ${NETWORK} (${reason}). It will be retried automatically.`,
      });
    }
  }

  async function startSession(account: TConnectorAccount, text: string, video: TDownloaded): Promise<URL> {
    const response = await http.post('upload/youtube/v3/videos', {
      searchParams: { uploadType: 'resumable', part: 'snippet,status' },
      json: {
        snippet: { title: titleOf(text), description: sanitize(text) },
        status: { privacyStatus: 'public', selfDeclaredMadeForKids: false },
      },
      headers: {
        ...headers(account),
        'x-upload-content-length': String(video.size),
        'x-upload-content-type': video.contentType,
      },
    });
    const location = response.headers.location;
    if (!location) {
      throw new StepFailure({ kind: 'transient', message: `${NETWORK} opened no upload session. Retrying.` });
    }
    return new URL(location, options.baseUrl ?? DEFAULT_BASE_URL);
  }

  return {
    platform: 'youtube',
    async publish(input: TPublishInput): Promise<TPublishOutcome> {
      const { account, text } = input;
      const source = input.media?.video;
      if (!source) {
        return {
          ok: false,
          failure: { kind: 'rejected', message: `${NETWORK} posts need a video. Add a video and retry.` },
        };
      }
      let video: TDownloaded | undefined;
      try {
        let session: URL;
        try {
          video = await download(source.url);
          session = await startSession(account, text, video);
        } catch (error) {
          throw beforeUpload(error);
        }
        // A URL instance bypasses the client's prefixUrl: the session URL is absolute.
        const created = await http
          .put(session, {
            body: createReadStream(video.path),
            headers: {
              ...headers(account),
              'content-type': video.contentType,
              'content-length': String(video.size),
            },
            timeout: transferTimeout,
          })
          .json<{ id?: string }>();
        if (!created.id) {
          return {
            ok: false,
            failure: {
              kind: 'transient',
              outcomeUnknown: true,
              message: `${NETWORK} did not confirm the upload; check the channel before retrying.`,
            },
          };
        }
        return { ok: true, remoteId: created.id, url: `https://www.youtube.com/watch?v=${created.id}` };
      } catch (error) {
        return { ok: false, failure: classify(error) };
      } finally {
        await video?.cleanup();
      }
    },

    async delete(account: TConnectorAccount, remote: TRemoteRef): Promise<TDeleteOutcome> {
      try {
        await http.delete('youtube/v3/videos', {
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
