import { createHash } from 'node:crypto';
import { mp4DurationSeconds } from '@sps/core';
import type { Request, Response, Router } from 'express';
import { answerOrHang, networkMiddleware, type SimState, type TErrorRenderer } from './sim-state.js';
import { checkChunkPlan, chunkProblem } from './tiktok-chunks.sim.js';
import { pullThenPost } from './tiktok-pull.sim.js';

// TikTok Content Posting API (Direct Post) as documented 2026-11-24; pages cited in tiktok.connector.ts.

/**
 * URL prefixes "verified" for the simulated app (with `SimState.tiktokVerifiedPrefixes`): PULL_FROM_URL
 * from anywhere else is refused with `url_ownership_unverified`, as TikTok does for a domain the app has
 * not verified.
 */
export const TIKTOK_SIM_VERIFIED_PREFIXES = ['https://media.verified.example/'];

/** A creator whose account is private (or an unaudited app): only SELF_ONLY, 60-second videos. */
export const TIKTOK_SIM_PRIVATE_TOKEN = 'tt-private-creator';

/** TikTok v2 errors: `{ data: {}, error: { code, message, log_id } }`. */
function tiktokError(res: Response, status: number, code: string, message: string): void {
  res.status(status).json({ data: {}, error: { code, message, log_id: 'sim-log-id' } });
}

const renderTiktokError: TErrorRenderer = (res, fault) => {
  switch (fault.kind) {
    case 'auth_expired':
      tiktokError(
        res,
        401,
        'access_token_invalid',
        'The access token is invalid or not found in the request.',
      );
      return;
    case 'rate_limited':
      res.set('Retry-After', String(fault.retryAfterSeconds ?? 1));
      tiktokError(
        res,
        429,
        'rate_limit_exceeded',
        'The API rate limit was exceeded. Please try again later.',
      );
      return;
    case 'rejected':
      tiktokError(res, 400, 'invalid_params', 'One or more fields in the request is invalid.');
      return;
    default:
      tiktokError(res, 500, 'internal_error', 'Internal error, please retry.');
  }
};

interface TInitBody {
  post_info?: {
    title?: string;
    description?: string;
    privacy_level?: string;
    disable_comment?: boolean;
    disable_duet?: boolean;
    disable_stitch?: boolean;
  };
  source_info?: {
    source?: string;
    video_url?: string;
    video_size?: number;
    chunk_size?: number;
    total_chunk_count?: number;
    photo_images?: string[];
  };
  post_mode?: string;
  media_type?: string;
}

/** One publish: where its bytes stand and what `status/fetch` answers. */
interface TPublish {
  id: string;
  token: string;
  text: string;
  privacy: string;
  upload?: { size: number; chunkSize: number; count: number; received: Buffer[]; next: number };
  photos?: string[];
  status: 'PROCESSING_UPLOAD' | 'PROCESSING_DOWNLOAD' | 'PUBLISH_COMPLETE' | 'FAILED';
  failReason?: string;
  /** TikTok is still downloading the PULL_FROM_URL media (only when the simulator plays the download). */
  pulling?: boolean;
  /** Status checks before it completes: the first check after the bytes arrive still says processing. */
  checksLeft: number;
  postId?: string;
  hang: boolean;
}

const refuseUnverified = (res: Response) =>
  tiktokError(
    res,
    403,
    'url_ownership_unverified',
    'Please review our URL ownership verification rules at https://developers.tiktok.com/doc/content-posting-api-media-transfer-guide#pull_from_url',
  );

const ok = (data: unknown) => ({ data, error: { code: 'ok', message: '', log_id: 'sim-log-id' } });

function creatorOf(token: string) {
  const restricted = token === TIKTOK_SIM_PRIVATE_TOKEN;
  return {
    creator_avatar_url: 'https://p16.tiktokcdn.example/avatar.jpg',
    creator_username: 'sim_creator',
    creator_nickname: 'Sim Creator',
    privacy_level_options: restricted
      ? ['SELF_ONLY']
      : ['PUBLIC_TO_EVERYONE', 'MUTUAL_FOLLOW_FRIENDS', 'SELF_ONLY'],
    comment_disabled: false,
    duet_disabled: false,
    stitch_disabled: true,
    max_video_post_duration_sec: restricted ? 60 : 600,
  };
}

const tokenOf = (req: Request) => (req.headers.authorization ?? '').slice('Bearer '.length);

/**
 * Creator info, video init (FILE_UPLOAD with chunked PUTs to the returned `upload_url`, or PULL_FROM_URL
 * from a verified prefix), photo init (PULL_FROM_URL only) and `status/fetch`. A post exists (in
 * `/__sim/posts`) once TikTok has its media; `status/fetch` reports PUBLISH_COMPLETE on the second check.
 */
export function registerTiktokSim(router: Router, sim: SimState): void {
  const publishes = new Map<string, TPublish>();
  // A hang consumed by the creator info query still loses the answer of the post it precedes.
  let pendingHang = false;

  router.use(networkMiddleware(sim, 'tiktok', renderTiktokError));

  // The upload host takes the bytes without a token: the upload URL itself is the credential.
  router.put('/__upload/:publishId', (req, res) => {
    const publish = publishes.get(req.params.publishId);
    if (!publish?.upload) {
      tiktokError(res, 404, 'not_found', 'The upload URL is invalid or has expired.');
      return;
    }
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const problem = chunkProblem(publish.upload, String(req.headers['content-range'] ?? ''), body.length);
    if (problem) {
      // Modeled: the transfer guide names the rules but not the upload host's refusal; 416 is HTTP's own.
      res
        .status(416)
        .json({ data: {}, error: { code: 'invalid_params', message: problem, log_id: 'sim-log-id' } });
      return;
    }
    publish.upload.received.push(body);
    publish.upload.next += 1;
    if (publish.upload.next < publish.upload.count) {
      res.status(206).end();
      return;
    }
    const bytes = Buffer.concat(publish.upload.received);
    publish.upload.received = [];
    const seconds = mp4DurationSeconds(bytes);
    const max = creatorOf(publish.token).max_video_post_duration_sec;
    // An MP4 TikTok cannot read (no movie header) or something that is no video at all.
    const webm = bytes.subarray(0, 4).toString('hex') === '1a45dfa3';
    if (!webm && seconds === null) {
      publish.status = 'FAILED';
      publish.failReason = 'file_format_check_failed';
    } else if (seconds !== null && seconds > max) {
      publish.status = 'FAILED';
      publish.failReason = 'duration_check_failed';
    } else {
      sim.addPost({
        platform: 'tiktok',
        remoteId: publish.id,
        text: publish.text,
        replyTo: null,
        media: {
          video: {
            bytes: bytes.length,
            sha256: createHash('sha256').update(bytes).digest('hex'),
            privacy: publish.privacy,
          },
        },
        idempotencyKey: null,
      });
    }
    res.status(201).end();
  });

  router.use((req, res, next) => {
    const header = req.headers.authorization ?? '';
    if (header.startsWith('Bearer ') && header.length > 7) return next();
    tiktokError(res, 401, 'access_token_invalid', 'The access token is invalid or not found in the request.');
  });

  router.post('/v2/post/publish/creator_info/query', (req, res) => {
    if (res.locals.hangAfterCreate) pendingHang = true;
    res.json(ok(creatorOf(tokenOf(req))));
  });

  function invalidPostInfo(req: Request, body: TInitBody, titleMax: number): [string, string] | undefined {
    const options = creatorOf(tokenOf(req)).privacy_level_options;
    const privacy = body.post_info?.privacy_level ?? '';
    if (!options.includes(privacy)) {
      return ['privacy_level_option_mismatch', 'privacy_level is not one of the privacy_level_options'];
    }
    // TikTok counts UTF-16 code units.
    if ((body.post_info?.title ?? '').length > titleMax) return ['invalid_params', 'title is too long'];
    return undefined;
  }

  function unverified(url: string): boolean {
    const prefixes = [...TIKTOK_SIM_VERIFIED_PREFIXES, ...sim.tiktokVerifiedPrefixes];
    return !prefixes.some((prefix) => url.startsWith(prefix));
  }

  function start(req: Request, res: Response, publish: Omit<TPublish, 'hang' | 'checksLeft' | 'token'>) {
    const full: TPublish = { ...publish, token: tokenOf(req), checksLeft: 1, hang: pendingHang };
    pendingHang = false;
    publishes.set(full.id, full);
    if (res.locals.hangAfterCreate) full.hang = true;
    return full;
  }

  router.post('/v2/post/publish/video/init', (req, res) => {
    const body = (req.body ?? {}) as TInitBody;
    const invalid = invalidPostInfo(req, body, 2200);
    if (invalid) return tiktokError(res, 400, invalid[0], invalid[1]);
    const source = body.source_info ?? {};
    const id = `v_pub_file~v2-1.${sim.nextNumericId()}`;
    const text = body.post_info?.title ?? '';
    const privacy = body.post_info?.privacy_level ?? '';
    if (source.source === 'PULL_FROM_URL') {
      if (!source.video_url || unverified(source.video_url)) return refuseUnverified(res);
      const publish = start(req, res, { id, text, privacy, status: 'PROCESSING_DOWNLOAD' });
      const url = source.video_url;
      pullThenPost(sim, publish, [url], 'video', (pulled) =>
        sim.addPost({
          platform: 'tiktok',
          remoteId: id,
          text,
          replyTo: null,
          media: { video: url, ...(pulled ? { pulled } : {}) },
          idempotencyKey: null,
        }),
      );
      if (publish.hang) res.locals.hangAfterCreate = true;
      return answerOrHang(res, () => res.json(ok({ publish_id: id })));
    }
    if (source.source !== 'FILE_UPLOAD') {
      return tiktokError(
        res,
        400,
        'invalid_params',
        'source_info.source must be FILE_UPLOAD or PULL_FROM_URL',
      );
    }
    const plan = checkChunkPlan(source.video_size, source.chunk_size, source.total_chunk_count);
    if (typeof plan === 'string') return tiktokError(res, 400, 'invalid_params', plan);
    const publish = start(req, res, {
      id,
      text,
      privacy,
      status: 'PROCESSING_UPLOAD',
      upload: { ...plan, received: [], next: 0 },
    });
    if (publish.hang) res.locals.hangAfterCreate = true;
    const base = `${req.protocol}://${req.get('host')}${req.baseUrl}`;
    answerOrHang(res, () =>
      res.json(ok({ publish_id: id, upload_url: `${base}/__upload/${encodeURIComponent(id)}` })),
    );
  });

  router.post('/v2/post/publish/content/init', (req, res) => {
    const body = (req.body ?? {}) as TInitBody;
    const photos = body.source_info?.photo_images ?? [];
    const invalid = invalidPostInfo(req, body, 90);
    if (invalid) return tiktokError(res, 400, invalid[0], invalid[1]);
    if (body.media_type !== 'PHOTO')
      return tiktokError(res, 400, 'invalid_params', 'media_type must be PHOTO');
    if (body.source_info?.source !== 'PULL_FROM_URL') {
      return tiktokError(res, 400, 'invalid_params', 'photo posts only support PULL_FROM_URL');
    }
    if (photos.length === 0 || photos.length > 35) {
      return tiktokError(res, 400, 'invalid_params', 'photo_images must hold 1 to 35 URLs');
    }
    if ((body.post_info?.description ?? '').length > 4000) {
      return tiktokError(res, 400, 'invalid_params', 'description is too long');
    }
    if (photos.some(unverified)) return refuseUnverified(res);
    const id = `p_pub_url~v2-1.${sim.nextNumericId()}`;
    const text = body.post_info?.description ?? body.post_info?.title ?? '';
    const publish = start(req, res, {
      id,
      text,
      privacy: body.post_info?.privacy_level ?? '',
      status: 'PROCESSING_DOWNLOAD',
      photos,
    });
    pullThenPost(sim, publish, photos, 'image', (pulled) =>
      sim.addPost({
        platform: 'tiktok',
        remoteId: id,
        text,
        replyTo: null,
        media: { photos, mode: body.post_mode, ...(pulled ? { pulled } : {}) },
        idempotencyKey: null,
      }),
    );
    if (publish.hang) res.locals.hangAfterCreate = true;
    answerOrHang(res, () => res.json(ok({ publish_id: id })));
  });

  router.post('/v2/post/publish/status/fetch', (req, res) => {
    const id = (req.body as { publish_id?: unknown } | undefined)?.publish_id;
    const publish = typeof id === 'string' ? publishes.get(id) : undefined;
    if (!publish || publish.token !== tokenOf(req)) {
      return tiktokError(
        res,
        400,
        'invalid_publish_id',
        'The publish_id does not exist or does not belong to the user.',
      );
    }
    const uploading = publish.upload && publish.upload.next < publish.upload.count;
    if (publish.status !== 'FAILED' && !uploading && !publish.pulling) {
      if (publish.checksLeft > 0) publish.checksLeft -= 1;
      else if (publish.status !== 'PUBLISH_COMPLETE') {
        publish.status = 'PUBLISH_COMPLETE';
        // Public posts get an id after moderation; private ones never do.
        if (publish.privacy === 'PUBLIC_TO_EVERYONE') publish.postId = `73${sim.nextNumericId()}`;
      }
    }
    const uploaded = publish.upload
      ? publish.upload.received.reduce((n, b) => n + b.length, 0) + (uploading ? 0 : publish.upload.size)
      : 0;
    // Post ids are int64 JSON numbers (19 digits), written as such: a client must not read them as doubles.
    const text = JSON.stringify(
      ok({
        status: publish.status,
        ...(publish.failReason ? { fail_reason: publish.failReason } : {}),
        publicaly_available_post_id: '__IDS__',
        uploaded_bytes: uploaded,
      }),
    ).replace('"__IDS__"', publish.postId ? `[${publish.postId}]` : '[]');
    res.type('application/json').send(text);
  });
}
