import type { Request, Response, Router } from 'express';
import { answerOrHang, networkMiddleware, type SimState, type TErrorRenderer } from './sim-state.js';

/** Google API errors: `{ error: { code, message, errors: [{ reason, domain }], status } }`. */
function googleError(res: Response, code: number, reason: string, message: string, status: string): void {
  res
    .status(code)
    .json({ error: { code, message, errors: [{ message, domain: 'youtube', reason }], status } });
}

const renderYoutubeError: TErrorRenderer = (res, fault) => {
  switch (fault.kind) {
    case 'auth_expired':
      googleError(
        res,
        401,
        'authError',
        'Request had invalid authentication credentials.',
        'UNAUTHENTICATED',
      );
      return;
    case 'rate_limited':
      res.set('Retry-After', String(fault.retryAfterSeconds ?? 1));
      googleError(res, 429, 'rateLimitExceeded', 'Too many requests.', 'RESOURCE_EXHAUSTED');
      return;
    case 'rejected':
      googleError(
        res,
        400,
        'invalidTitle',
        'The request metadata specifies an invalid video title.',
        'INVALID_ARGUMENT',
      );
      return;
    default:
      googleError(res, 503, 'backendError', 'Backend Error', 'UNAVAILABLE');
  }
};

/** A few bytes with an MP4 `ftyp` box: enough for the connector to download and forward. */
const FAKE_MP4 = Buffer.from('000000186674797069736f6d0000020069736f6d69736f32', 'hex');

interface TVideoResource {
  snippet?: { title?: string; description?: string; categoryId?: string };
  status?: { privacyStatus?: string };
}

interface TSession {
  metadata: TVideoResource;
  contentType: string;
  declaredLength: number | undefined;
  hang: boolean;
}

/**
 * YouTube Data API v3 video upload with the resumable protocol (`POST /upload/youtube/v3/videos
 * ?uploadType=resumable` answers a session URL in `Location`; `PUT` to it with the bytes creates the
 * video) and `DELETE /youtube/v3/videos?id=`. `GET /youtube/__media/video.mp4` serves a fake video to
 * download; it is mounted before the fault middleware so faults never hit the media host.
 */
export function registerYoutubeSim(router: Router, sim: SimState): void {
  const sessions = new Map<string, TSession>();

  router.get('/__media/:name', (_req, res) => {
    res.type('video/mp4').send(FAKE_MP4);
  });
  router.use(networkMiddleware(sim, 'youtube', renderYoutubeError));
  router.use((req: Request, res: Response, next) => {
    const header = req.headers.authorization ?? '';
    if (header.startsWith('Bearer ') && header.length > 7) return next();
    googleError(res, 401, 'required', 'Login Required.', 'UNAUTHENTICATED');
  });

  router.post('/upload/youtube/v3/videos', (req, res) => {
    if (req.query.uploadType !== 'resumable') {
      googleError(
        res,
        400,
        'badRequest',
        'The simulator only supports uploadType=resumable.',
        'INVALID_ARGUMENT',
      );
      return;
    }
    const metadata = (req.body ?? {}) as TVideoResource;
    const title = metadata.snippet?.title ?? '';
    if (!title || title.length > 100 || /[<>]/.test(title)) {
      googleError(
        res,
        400,
        'invalidTitle',
        'The request metadata specifies an invalid video title.',
        'INVALID_ARGUMENT',
      );
      return;
    }
    const uploadId = sim.nextUuid();
    const length = Number(req.headers['x-upload-content-length']);
    sessions.set(uploadId, {
      metadata,
      contentType: String(req.headers['x-upload-content-type'] ?? 'video/*'),
      declaredLength: Number.isFinite(length) ? length : undefined,
      // A hang consumed here still means "the video was created but its answer was lost".
      hang: Boolean(res.locals.hangAfterCreate),
    });
    const base = `${req.protocol}://${req.get('host')}${req.baseUrl}`;
    res
      .set(
        'Location',
        `${base}/upload/youtube/v3/videos?uploadType=resumable&part=snippet,status&upload_id=${uploadId}`,
      )
      .status(200)
      .end();
  });

  router.put('/upload/youtube/v3/videos', (req, res) => {
    const uploadId = typeof req.query.upload_id === 'string' ? req.query.upload_id : '';
    const session = sessions.get(uploadId);
    if (!session) {
      res
        .status(404)
        .json({ error: { code: 404, message: 'Upload session not found', status: 'NOT_FOUND' } });
      return;
    }
    const bytes = Buffer.isBuffer(req.body) ? req.body.length : 0;
    if (bytes === 0 || (session.declaredLength !== undefined && bytes !== session.declaredLength)) {
      googleError(res, 400, 'badContent', 'The uploaded content is incomplete or empty.', 'INVALID_ARGUMENT');
      return;
    }
    sessions.delete(uploadId);
    const id = sim.nextUuid().replace(/-/g, '').slice(0, 11);
    const snippet = { ...session.metadata.snippet, channelId: 'UCsimchannel000000000000' };
    sim.addPost({
      platform: 'youtube',
      remoteId: id,
      text: snippet.description ?? '',
      replyTo: null,
      media: { title: snippet.title, contentType: session.contentType, bytes },
      idempotencyKey: null,
    });
    if (session.hang) res.locals.hangAfterCreate = true;
    answerOrHang(res, () =>
      res.json({
        kind: 'youtube#video',
        etag: 'sim-etag',
        id,
        snippet,
        status: {
          uploadStatus: 'uploaded',
          privacyStatus: session.metadata.status?.privacyStatus ?? 'public',
        },
      }),
    );
  });

  router.delete('/youtube/v3/videos', (req, res) => {
    const id = typeof req.query.id === 'string' ? req.query.id : '';
    const post = sim.getPost('youtube', id);
    if (!post || post.deleted) {
      googleError(
        res,
        404,
        'videoNotFound',
        'The video that you are trying to delete cannot be found.',
        'NOT_FOUND',
      );
      return;
    }
    post.deleted = true;
    res.status(204).end();
  });
}
