import type {
  TConnectorAccount,
  TConnectorOptions,
  TNetworkConnector,
  TNetworkFailure,
  TPublishInput,
  TPublishOutcome,
} from './connector.js';
import { classifyHttpError, createHttpClient, truncateBody } from './http-client.js';

const DEFAULT_BASE_URL = 'https://open.tiktokapis.com';
const NETWORK = 'TikTok';
const MAX_PHOTOS = 35;
const PHOTO_TITLE_MAX = 90;
/** Errors that only a new authorization fixes. */
const AUTH_CODES = new Set(['access_token_invalid', 'scope_not_authorized']);

/** Every TikTok v2 answer: `{ data, error: { code, message, log_id } }`, with `code: "ok"` on success. */
interface TEnvelope<T> {
  data?: T;
  error?: { code?: string; message?: string; log_id?: string };
}

interface TCreatorInfo {
  creator_username?: string;
  privacy_level_options?: string[];
  comment_disabled?: boolean;
  duet_disabled?: boolean;
  stitch_disabled?: boolean;
}

function errorCode(body: unknown): string | undefined {
  return typeof body === 'object' && body !== null ? (body as TEnvelope<unknown>).error?.code : undefined;
}

class StepFailure extends Error {
  constructor(readonly failure: TNetworkFailure) {
    super(failure.message);
  }
}

function classify(error: unknown): TNetworkFailure {
  if (error instanceof StepFailure) return error.failure;
  return classifyHttpError(error, {
    network: NETWORK,
    isAuthError: (_status, body) => AUTH_CODES.has(errorCode(body) ?? ''),
  });
}

/** TikTok reports errors with a non-2xx status, but a 2xx carrying an error code is not a success either. */
function unwrap<T>(body: TEnvelope<T>): T {
  const code = body.error?.code;
  if (code && code !== 'ok') {
    const auth = AUTH_CODES.has(code);
    throw new StepFailure({
      kind: auth ? 'auth_expired' : 'rejected',
      body: truncateBody(body),
      message: auth
        ? `${NETWORK} rejected the account's token (${code}). Reconnect the ${NETWORK} account and retry.`
        : `${NETWORK} rejected the post (${code}): ${body.error?.message ?? ''}. Fix the content or account and retry.`,
    });
  }
  if (!body.data)
    throw new StepFailure({ kind: 'transient', message: `${NETWORK} answered without data. Retrying.` });
  return body.data;
}

/** Public unless the creator's settings (or an unaudited app) only allow narrower audiences. */
function pickPrivacy(options: string[] | undefined): string {
  if (!options || options.length === 0) return 'SELF_ONLY';
  return options.includes('PUBLIC_TO_EVERYONE') ? 'PUBLIC_TO_EVERYONE' : (options[0] ?? 'SELF_ONLY');
}

function firstLine(text: string, max: number): string {
  const line = text.split('\n').find((l) => l.trim() !== '') ?? '';
  return Array.from(line.trim()).slice(0, max).join('');
}

export function createTiktokConnector(options: TConnectorOptions = {}): TNetworkConnector {
  const http = createHttpClient(options.baseUrl ?? DEFAULT_BASE_URL, options.timeoutMs);
  const headers = (account: TConnectorAccount) => ({
    authorization: `Bearer ${account.token}`,
    'content-type': 'application/json; charset=UTF-8',
  });

  return {
    platform: 'tiktok',
    async publish(input: TPublishInput): Promise<TPublishOutcome> {
      const { account, text, media } = input;
      const video = media?.video ?? null;
      const photos = media?.images ?? [];
      if (!video && photos.length === 0) {
        return {
          ok: false,
          failure: {
            kind: 'rejected',
            message: `${NETWORK} posts need a video or photos. Add media and retry.`,
          },
        };
      }
      if (!video && photos.length > MAX_PHOTOS) {
        return {
          ok: false,
          failure: {
            kind: 'rejected',
            message: `${NETWORK} photo posts hold at most ${MAX_PHOTOS} photos. Remove some and retry.`,
          },
        };
      }
      let creator: TCreatorInfo;
      try {
        // Direct Post requires the creator's current settings: allowed privacy levels, disabled interactions.
        const body = await http
          .post('v2/post/publish/creator_info/query/', { json: {}, headers: headers(account) })
          .json<TEnvelope<TCreatorInfo>>();
        creator = unwrap(body);
      } catch (error) {
        // Nothing was posted yet, so even a timeout here is safe to retry.
        const { outcomeUnknown: _ignored, ...failure } = classify(error);
        return { ok: false, failure };
      }
      const interactions = {
        privacy_level: pickPrivacy(creator.privacy_level_options),
        disable_comment: creator.comment_disabled ?? false,
      };
      // A post cannot mix a video and photos: the video wins, the images only serve other networks.
      const request = video
        ? {
            path: 'v2/post/publish/video/init/',
            body: {
              post_info: {
                title: text,
                ...interactions,
                disable_duet: creator.duet_disabled ?? false,
                disable_stitch: creator.stitch_disabled ?? false,
              },
              source_info: { source: 'PULL_FROM_URL', video_url: video.url },
            },
          }
        : {
            path: 'v2/post/publish/content/init/',
            body: {
              post_info: { title: firstLine(text, PHOTO_TITLE_MAX), description: text, ...interactions },
              source_info: {
                source: 'PULL_FROM_URL',
                photo_cover_index: 0,
                photo_images: photos.map((p) => p.url),
              },
              post_mode: 'DIRECT_POST',
              media_type: 'PHOTO',
            },
          };
      try {
        const body = await http
          .post(request.path, { json: request.body, headers: headers(account) })
          .json<TEnvelope<{ publish_id?: string }>>();
        const publishId = unwrap(body).publish_id;
        if (!publishId) {
          return {
            ok: false,
            failure: {
              kind: 'transient',
              outcomeUnknown: true,
              message: `${NETWORK} accepted the post without a publish id; check the account before retrying.`,
            },
          };
        }
        // TikTok publishes asynchronously: the answer holds only a `publish_id`, and the post id exists
        // once TikTok has pulled and processed the media. The profile URL is the best link known now.
        const username = (creator.creator_username ?? account.accountName).replace(/^@/, '');
        return { ok: true, remoteId: publishId, url: `https://www.tiktok.com/@${username}` };
      } catch (error) {
        return { ok: false, failure: classify(error) };
      }
    },
    // No delete: the Content Posting API cannot delete posts.
  };
}
