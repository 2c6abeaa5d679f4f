import { mp4DurationSeconds } from '@sps/core';
import { mp4MoovOf, withVideoFile } from './chunked-upload.js';
import type {
  TConnectorAccount,
  TConnectorOptions,
  TNetworkConnector,
  TPublishInput,
  TPublishOutcome,
} from './connector.js';
import { createHttpClient, type TStep, truncateBody } from './http-client.js';
import { createMediaFetcher } from './media-fetch.js';
import { pendingOutcome, runToEnd, stillProcessing, waitSince } from './processing-step.js';
import {
  classify,
  NETWORK,
  type TCreatorInfo,
  type TEnvelope,
  type TProgress,
  type TStatus,
  unwrap,
} from './tiktok-api.js';
import { planChunks, uploadChunks } from './tiktok-upload.js';

// TikTok Content Posting API, Direct Post, read 2026-11-24:
// https://developers.tiktok.com/doc/content-posting-api-reference-direct-post (creator info, video init)
// https://developers.tiktok.com/doc/content-posting-api-media-transfer-guide (FILE_UPLOAD chunks; PULL_FROM_URL
//   only from a URL prefix or domain verified for the app, else `url_ownership_unverified`)
// https://developers.tiktok.com/doc/content-posting-api-reference-photo-post (photos: PULL_FROM_URL only)
// https://developers.tiktok.com/doc/content-posting-api-reference-get-video-status (status/fetch)

const DEFAULT_BASE_URL = 'https://open.tiktokapis.com';
const MAX_PHOTOS = 35;
/** Lengths TikTok counts in UTF-16 code units (a JavaScript string's length). */
const VIDEO_TITLE_MAX = 2200;
const PHOTO_TITLE_MAX = 90;
const PHOTO_DESCRIPTION_MAX = 4000;
/**
 * TikTok takes videos up to 4 GB (the media transfer guide); the video is spooled to a temporary file and
 * sent chunk by chunk from it, so the publisher's memory does not grow with it.
 */
const MAX_VIDEO_BYTES = 4 * 1024 * 1024 * 1024;
/** Processing takes under a minute for 512 MB and moderation usually a minute (status page); 30 checks a minute allowed. */
const WAIT_DEFAULTS = { intervalMs: 10_000, maxWaitMs: 5 * 60_000 };

/**
 * The privacy level must be one the creator's account offers now (`privacy_level_options`): public
 * when offered, else the first one offered (an unaudited app or a private account offers fewer).
 */
function pickPrivacy(options: string[] | undefined): string | null {
  if (!options || options.length === 0) return null;
  return options.includes('PUBLIC_TO_EVERYONE') ? 'PUBLIC_TO_EVERYONE' : (options[0] ?? null);
}

function firstLine(text: string, max: number): string {
  const line = text.split('\n').find((l) => l.trim() !== '') ?? '';
  // Cut by code points, then keep within `max` UTF-16 units (TikTok's count) without splitting a pair.
  let out = '';
  for (const char of line.trim()) {
    if (out.length + char.length > max) break;
    out += char;
  }
  return out;
}

const rejected = (message: string): TPublishOutcome => ({
  ok: false,
  failure: { kind: 'rejected', message },
});

export function createTiktokConnector(options: TConnectorOptions = {}): TNetworkConnector {
  const http = createHttpClient(options.baseUrl ?? DEFAULT_BASE_URL, options.timeoutMs);
  const fetchMedia = options.fetchMedia ?? createMediaFetcher();
  const headers = (account: TConnectorAccount) => ({
    authorization: `Bearer ${account.token}`,
    'content-type': 'application/json; charset=UTF-8',
  });

  async function call<T>(account: TConnectorAccount, path: string, json: object): Promise<T> {
    return unwrap(await http.post(path, { json, headers: headers(account) }).json<TEnvelope<T>>());
  }

  async function fetchStatus(account: TConnectorAccount, publishId: string): Promise<TStatus> {
    const raw = await http
      .post('v2/post/publish/status/fetch/', {
        json: { publish_id: publishId },
        headers: headers(account),
        responseType: 'text',
      })
      .text();
    // Post ids are int64 JSON numbers, beyond a double's exact range: read them as strings.
    const quoted = raw.replace(
      /("publicaly_available_post_id"\s*:\s*\[)([^\]]*)\]/,
      (_m, head, ids: string) => `${head}${ids.replace(/(\d+)/g, '"$1"')}]`,
    );
    return unwrap(JSON.parse(quoted) as TEnvelope<TStatus>);
  }

  /**
   * Checks `status/fetch` once per call until PUBLISH_COMPLETE (success) or FAILED (TikTok's `fail_reason`);
   * in between it answers `pending` with the wait's start saved beside the publish id, so no worker slot
   * waits (the publisher calls again; a resumed publish comes back here through `resumable`).
   */
  async function awaitPublished(
    account: TConnectorAccount,
    publishId: string,
    username: string,
    input: TPublishInput,
  ): Promise<TPublishOutcome> {
    const budget = { network: NETWORK, defaults: WAIT_DEFAULTS, wait: options.processingWait };
    const step = await runToEnd<TStatus>(input.progress, async (progress) => {
      const since = waitSince(progress.saved);
      let status: TStatus;
      try {
        status = await fetchStatus(account, publishId);
      } catch (error) {
        // The post is with TikTok whatever this check says: a failed check is never "unknown".
        const { outcomeUnknown: _ignored, ...failure } = classify(error);
        return { kind: 'failed', failure };
      }
      if (status.status === 'PUBLISH_COMPLETE' || status.status === 'FAILED') {
        return { kind: 'ready', value: status };
      }
      const uploaded: TProgress = { publishId, stage: 'uploaded' };
      const next = stillProcessing(budget, since, 'the post');
      // Out of time: the publish id stays (a retry polls it again), the wait starts afresh then.
      if (next.kind === 'failed') {
        if (progress.saved?.waitSince) await progress.save(uploaded);
        return next;
      }
      if (!progress.saved?.waitSince) await progress.save({ ...uploaded, waitSince: String(since) });
      return next;
    });
    if (step.kind === 'failed') return { ok: false, failure: step.failure };
    if (step.kind === 'pending') return pendingOutcome(NETWORK, step);
    const final = step.value;
    if (final.status === 'FAILED') {
      // A failed publish is over at TikTok: a retry starts a new one.
      await input.progress?.save(null);
      return {
        ok: false,
        failure: {
          kind: 'rejected',
          body: truncateBody(final),
          message: `${NETWORK} could not publish the post (${final.fail_reason ?? 'no reason given'}). Fix the media and retry.`,
        },
      };
    }
    // Public posts get an id once moderated; private ones never do, and the profile is the best link.
    const postId = final.publicaly_available_post_id?.[0];
    return postId !== undefined
      ? {
          ok: true,
          remoteId: String(postId),
          url: `https://www.tiktok.com/@${username}/video/${postId}`,
          meta: { publishId },
        }
      : { ok: true, remoteId: publishId, url: `https://www.tiktok.com/@${username}`, meta: { publishId } };
  }

  /** Downloads the video and sends it with FILE_UPLOAD (TikTok pulls URLs only from verified domains). */
  async function postVideo(
    input: TPublishInput,
    creator: TCreatorInfo,
    postInfo: Record<string, unknown>,
    url: string,
  ): Promise<TStep<string>> {
    const { account } = input;
    // Spooled to a temporary file (removed in `withVideoFile`), sent chunk by chunk from it.
    return withVideoFile(
      fetchMedia,
      { url, network: NETWORK, maxBytes: MAX_VIDEO_BYTES, account: account.id },
      async (file) => {
        const moov = file.type === 'video/webm' ? null : await mp4MoovOf(file);
        const seconds = moov ? mp4DurationSeconds(moov) : null;
        const max = creator.max_video_post_duration_sec;
        if (seconds !== null && max !== undefined && seconds > max) {
          return {
            ok: false,
            failure: {
              kind: 'rejected',
              message: `The video is ${Math.ceil(seconds)} s long; this ${NETWORK} account may post videos of up to ${max} s. Shorten it and retry.`,
            },
          };
        }
        const plan = planChunks(file.size, options.uploadChunkBytes);
        let init: { publish_id?: string; upload_url?: string };
        try {
          init = await call(account, 'v2/post/publish/video/init/', {
            post_info: postInfo,
            source_info: {
              source: 'FILE_UPLOAD',
              video_size: file.size,
              chunk_size: plan.chunkSize,
              total_chunk_count: plan.count,
            },
          });
        } catch (error) {
          return { ok: false, failure: classify(error) };
        }
        if (!init.publish_id || !init.upload_url) {
          return {
            ok: false,
            failure: {
              kind: 'transient',
              message: `${NETWORK} opened no upload. It will be retried automatically.`,
            },
          };
        }
        const progress: TProgress = {
          publishId: init.publish_id,
          stage: 'init',
          videoSize: String(file.size),
        };
        await input.progress?.save(progress);
        const sent = await uploadChunks(init.upload_url, file, plan, options.timeoutMs);
        // Nothing is published from an incomplete upload, so a failed transfer is safe to retry.
        if (!sent.ok) return { ok: false, failure: classify(sent.error) };
        await input.progress?.save({ ...progress, stage: 'uploaded' });
        return { ok: true, value: init.publish_id };
      },
    );
  }

  async function postPhotos(
    input: TPublishInput,
    postInfo: Record<string, unknown>,
    urls: string[],
  ): Promise<TStep<string>> {
    try {
      const { publish_id: publishId } = await call<{ publish_id?: string }>(
        input.account,
        'v2/post/publish/content/init/',
        {
          post_info: postInfo,
          // Photos can only be pulled, from a domain or URL prefix verified for the app.
          source_info: { source: 'PULL_FROM_URL', photo_cover_index: 0, photo_images: urls },
          post_mode: 'DIRECT_POST',
          media_type: 'PHOTO',
        },
      );
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
      await input.progress?.save({ publishId, stage: 'uploaded' });
      return { ok: true, value: publishId };
    } catch (error) {
      return { ok: false, failure: classify(error) };
    }
  }

  /**
   * An earlier attempt's publish: once uploaded it is only polled; an upload that stopped short never
   * publishes, so it is started again (the saved size tells the two apart).
   */
  async function resumable(account: TConnectorAccount, saved: TProgress): Promise<boolean> {
    if (saved.stage === 'uploaded') return true;
    const status = await fetchStatus(account, saved.publishId);
    if (status.status === 'FAILED') return false;
    if (status.status === 'PROCESSING_UPLOAD') {
      return Number(status.uploaded_bytes ?? 0) >= Number(saved.videoSize ?? Number.POSITIVE_INFINITY);
    }
    return true;
  }

  return {
    platform: 'tiktok',
    async publish(input: TPublishInput): Promise<TPublishOutcome> {
      const { account, text, media } = input;
      const video = media?.video ?? null;
      const photos = media?.images ?? [];
      if (!video && photos.length === 0) {
        return rejected(`${NETWORK} posts need a video or photos. Add media and retry.`);
      }
      if (!video && photos.length > MAX_PHOTOS) {
        return rejected(`${NETWORK} photo posts hold at most ${MAX_PHOTOS} photos. Remove some and retry.`);
      }
      if (video && text.length > VIDEO_TITLE_MAX) {
        return rejected(
          `${NETWORK} captions hold at most ${VIDEO_TITLE_MAX} UTF-16 units; this one has ${text.length}. Shorten it and retry.`,
        );
      }
      if (!video && text.length > PHOTO_DESCRIPTION_MAX) {
        return rejected(
          `${NETWORK} photo descriptions hold at most ${PHOTO_DESCRIPTION_MAX} UTF-16 units; this one has ${text.length}. Shorten it and retry.`,
        );
      }
      let creator: TCreatorInfo;
      try {
        // Direct Post requires the creator's current settings: allowed privacy levels, disabled interactions.
        creator = await call<TCreatorInfo>(account, 'v2/post/publish/creator_info/query/', {});
        const saved = input.progress?.saved as TProgress | null | undefined;
        if (saved?.publishId && (await resumable(account, saved))) {
          const username = (creator.creator_username ?? account.accountName).replace(/^@/, '');
          return await awaitPublished(account, saved.publishId, username, input);
        }
      } catch (error) {
        // Nothing new was posted by these calls, so even a timeout here is safe to retry.
        const { outcomeUnknown: _ignored, ...failure } = classify(error);
        return { ok: false, failure };
      }
      const privacy = pickPrivacy(creator.privacy_level_options);
      if (!privacy) {
        return rejected(`The ${NETWORK} account offers no privacy level to post with. Check the account.`);
      }
      // Interactions the creator turned off in the app must stay off; the others stay on.
      const interactions = { privacy_level: privacy, disable_comment: creator.comment_disabled ?? false };
      // A post cannot mix a video and photos: the video wins, the images only serve other networks.
      const started = video
        ? await postVideo(
            input,
            creator,
            {
              title: text,
              ...interactions,
              disable_duet: creator.duet_disabled ?? false,
              disable_stitch: creator.stitch_disabled ?? false,
            },
            video.url,
          )
        : await postPhotos(
            input,
            { title: firstLine(text, PHOTO_TITLE_MAX), description: text, ...interactions },
            photos.map((p) => p.url),
          );
      if (!started.ok) return started;
      const username = (creator.creator_username ?? account.accountName).replace(/^@/, '');
      return awaitPublished(account, started.value, username, input);
    },
    // No delete: the Content Posting API cannot delete posts.
  };
}
