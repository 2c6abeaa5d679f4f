import type { Request, Response, Router } from 'express';
import { answerOrHang, networkMiddleware, type SimState, type TErrorRenderer } from './sim-state.js';

const PRIVACY_LEVELS = ['PUBLIC_TO_EVERYONE', 'MUTUAL_FOLLOW_FRIENDS', 'SELF_ONLY'];

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
  post_info?: { title?: string; description?: string; privacy_level?: string };
  source_info?: { source?: string; video_url?: string; photo_images?: string[] };
  post_mode?: string;
  media_type?: string;
}

const ok = (data: unknown) => ({ data, error: { code: 'ok', message: '', log_id: 'sim-log-id' } });

/**
 * TikTok Content Posting API (Direct Post): creator info query, video init with PULL_FROM_URL, and
 * photo init (`content/init` with `media_type: PHOTO`). Posts are stored under their `publish_id`.
 */
export function registerTiktokSim(router: Router, sim: SimState): void {
  // A hang consumed by the creator info query still loses the answer of the post it precedes.
  let pendingHang = false;

  router.use(networkMiddleware(sim, 'tiktok', renderTiktokError));
  router.use((req, res, next) => {
    const header = req.headers.authorization ?? '';
    if (header.startsWith('Bearer ') && header.length > 7) return next();
    tiktokError(res, 401, 'access_token_invalid', 'The access token is invalid or not found in the request.');
  });

  router.post('/v2/post/publish/creator_info/query', (_req, res) => {
    if (res.locals.hangAfterCreate) pendingHang = true;
    res.json(
      ok({
        creator_avatar_url: 'https://p16.tiktokcdn.example/avatar.jpg',
        creator_username: 'sim_creator',
        creator_nickname: 'Sim Creator',
        privacy_level_options: PRIVACY_LEVELS,
        comment_disabled: false,
        duet_disabled: false,
        stitch_disabled: true,
        max_video_post_duration_sec: 600,
      }),
    );
  });

  function create(req: Request, res: Response, media: unknown): void {
    const body = req.body as TInitBody;
    const publishId = `v_pub_url~v2-1.${sim.nextNumericId()}`;
    sim.addPost({
      platform: 'tiktok',
      remoteId: publishId,
      text: body.post_info?.description ?? body.post_info?.title ?? '',
      replyTo: null,
      media,
      idempotencyKey: null,
    });
    if (pendingHang) {
      pendingHang = false;
      res.locals.hangAfterCreate = true;
    }
    answerOrHang(res, () => res.json(ok({ publish_id: publishId })));
  }

  function invalidPostInfo(body: TInitBody, titleMax: number): string | undefined {
    if (!PRIVACY_LEVELS.includes(body.post_info?.privacy_level ?? '')) return 'privacy_level is invalid';
    if (Array.from(body.post_info?.title ?? '').length > titleMax) return 'title is too long';
    if (body.source_info?.source !== 'PULL_FROM_URL') return 'source_info.source must be PULL_FROM_URL';
    return undefined;
  }

  router.post('/v2/post/publish/video/init', (req, res) => {
    const body = (req.body ?? {}) as TInitBody;
    const problem =
      invalidPostInfo(body, 2200) ?? (body.source_info?.video_url ? undefined : 'video_url is required');
    if (problem) {
      tiktokError(res, 400, 'invalid_params', problem);
      return;
    }
    create(req, res, { video: body.source_info?.video_url });
  });

  router.post('/v2/post/publish/content/init', (req, res) => {
    const body = (req.body ?? {}) as TInitBody;
    const photos = body.source_info?.photo_images ?? [];
    const problem =
      invalidPostInfo(body, 90) ??
      (body.media_type !== 'PHOTO' ? 'media_type must be PHOTO' : undefined) ??
      (photos.length === 0 ? 'photo_images is required' : undefined);
    if (problem) {
      tiktokError(res, 400, 'invalid_params', problem);
      return;
    }
    create(req, res, { photos, mode: body.post_mode });
  });
}
