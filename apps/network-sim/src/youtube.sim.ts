import { createHash, type Hash } from 'node:crypto';
import { fakeMp4 } from '@sps/core';
import type { Express, Request, Response, Router } from 'express';
import { registerYoutubeCommentsSim } from './comments.sim.js';
import { perSim } from './per-sim.js';
import { answerOrHang, networkMiddleware, type SimState, type TErrorRenderer } from './sim-state.js';

/** A 1 KB MP4 (a 5-second movie header and padding): enough for the connector to download and forward. */
const FAKE_MP4 = Buffer.from(fakeMp4(5, 1024));

// YouTube Data API v3 as documented 2026-11-24 (pages cited in youtube.connector.ts).

/** A project whose daily quota is used up: every call answers 403 `quotaExceeded`. */
export const YOUTUBE_SIM_QUOTA_TOKEN = 'yt-quota-exhausted';
/** A channel over its upload count: session starts answer 400 `uploadLimitExceeded`. */
export const YOUTUBE_SIM_UPLOAD_LIMIT_TOKEN = 'yt-upload-limit';

/** Google API errors: `{ error: { code, message, errors: [{ reason, domain }], status } }`. */
function googleError(res: Response, code: number, reason: string, message: string, status: string): void {
  res
    .status(code)
    .json({ error: { code, message, errors: [{ message, domain: 'youtube', reason }], status } });
}

/** YouTube's answer to a missing or unusable `snippet.title` (also the simulated rejection). */
const invalidTitle = (res: Response) =>
  googleError(
    res,
    400,
    'invalidTitle',
    'The request metadata specifies an invalid video title.',
    'INVALID_ARGUMENT',
  );

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
      invalidTitle(res);
      return;
    default:
      googleError(res, 503, 'backendError', 'Backend Error', 'UNAVAILABLE');
  }
};

interface TVideoResource {
  snippet?: { title?: string; description?: string; categoryId?: string };
  status?: { privacyStatus?: string };
}

interface TSession {
  metadata: TVideoResource;
  contentType: string;
  declaredLength: number | undefined;
  /** Bytes kept so far; a resumed upload continues from here. */
  /** sha256 of the bytes kept so far, in order (not the bytes: bench:media sends hundreds of megabytes). */
  received: Hash;
  receivedBytes: number;
  /** The created video, once every byte arrived (a session creates at most one). */
  video?: { id: string; status: { uploadStatus: string; privacyStatus: string } } & Record<string, unknown>;
  hang: boolean;
}

/**
 * YouTube Data API v3 video upload with the resumable protocol (`POST /upload/youtube/v3/videos
 * ?uploadType=resumable` answers a session URL in `Location`; `PUT` to it with the bytes creates the
 * video) and `DELETE /youtube/v3/videos?id=`. `GET /youtube/__media/video.mp4` serves a fake video to
 * download; it is mounted before the fault middleware so faults never hit the media host.
 */
/**
 * The operator's Google Cloud project: unaudited, every upload is locked to private whatever it asked
 * (videos.insert: "All videos uploaded via the videos.insert endpoint from unverified API projects created
 * after 28 July 2020 will be restricted to private viewing mode"). Audited by default here.
 */
export const youtubeProjectOf = perSim(() => ({ unverified: false }));

/** `POST /__sim/youtube/project {unverified}`: the project's audit state. */
export function registerYoutubeControls(app: Express, sim: SimState): void {
  app.post('/__sim/youtube/project', (req, res) => {
    youtubeProjectOf(sim).unverified = (req.body as { unverified?: boolean }).unverified === true;
    res.status(204).end();
  });
}

export function registerYoutubeSim(router: Router, sim: SimState): void {
  const sessions = new Map<string, TSession>();

  router.get('/__media/:name', (_req, res) => {
    res.type('video/mp4').send(FAKE_MP4);
  });
  router.use(networkMiddleware(sim, 'youtube', renderYoutubeError));
  router.use((req: Request, res: Response, next) => {
    const header = req.headers.authorization ?? '';
    if (header === `Bearer ${YOUTUBE_SIM_QUOTA_TOKEN}`) {
      // Quota errors carry no status string: 403 with reason quotaExceeded in domain youtube.quota.
      res.status(403).json({
        error: {
          code: 403,
          message:
            'The request cannot be completed because you have exceeded your <a href="/youtube/v3/getting-started#quota">quota</a>.',
          errors: [
            {
              message: 'The request cannot be completed because you have exceeded your quota.',
              domain: 'youtube.quota',
              reason: 'quotaExceeded',
            },
          ],
        },
      });
      return;
    }
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
    // "at most 100 characters … all valid UTF-8 characters except < and >".
    if (!title || Array.from(title).length > 100 || /[<>]/.test(title)) {
      invalidTitle(res);
      return;
    }
    const description = metadata.snippet?.description ?? '';
    // "at most 5000 bytes … except < and >".
    if (Buffer.byteLength(description, 'utf8') > 5000 || /[<>]/.test(description)) {
      googleError(
        res,
        400,
        'invalidDescription',
        'The request metadata specifies an invalid video description.',
        'INVALID_ARGUMENT',
      );
      return;
    }
    if (req.headers.authorization === `Bearer ${YOUTUBE_SIM_UPLOAD_LIMIT_TOKEN}`) {
      res.status(400).json({
        error: {
          code: 400,
          message: 'The user has exceeded the number of videos they may upload.',
          errors: [
            {
              message: 'The user has exceeded the number of videos they may upload.',
              domain: 'youtube.video',
              reason: 'uploadLimitExceeded',
            },
          ],
        },
      });
      return;
    }
    const uploadId = sim.nextUuid();
    const length = Number(req.headers['x-upload-content-length']);
    sessions.set(uploadId, {
      metadata,
      contentType: String(req.headers['x-upload-content-type'] ?? 'video/*'),
      declaredLength: Number.isFinite(length) ? length : undefined,
      received: createHash('sha256'),
      receivedBytes: 0,
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
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const total = session.declaredLength;
    const range = String(req.headers['content-range'] ?? '');
    // Status query: `bytes */TOTAL` with no body.
    if (/^bytes \*\/\d+$/.test(range)) {
      if (session.video) {
        res.status(200).json(session.video);
        return;
      }
      if (session.receivedBytes > 0) res.set('Range', `bytes=0-${session.receivedBytes - 1}`);
      res.status(308).end();
      return;
    }
    const match = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(range);
    const first = match ? Number(match[1]) : 0;
    if (session.video || first !== session.receivedBytes || (match && Number(match[3]) !== total)) {
      // Modeled: the guide says to resume from the byte after the Range the session reported.
      googleError(
        res,
        400,
        'badContent',
        'The Content-Range does not continue the upload.',
        'INVALID_ARGUMENT',
      );
      return;
    }
    if (body.length === 0 || (match && body.length !== Number(match[2]) - first + 1)) {
      googleError(res, 400, 'badContent', 'The uploaded content is incomplete or empty.', 'INVALID_ARGUMENT');
      return;
    }
    if (res.locals.hangAfterCreate) {
      // The connection dropped mid-transfer: the session kept the first half and nobody answers.
      const kept = body.subarray(0, Math.floor(body.length / 2));
      session.received.update(kept);
      session.receivedBytes += kept.length;
      answerOrHang(res, () => undefined);
      return;
    }
    // Every chunk but the last is a multiple of 256 KiB in the resumable protocol:
    // https://developers.google.com/youtube/v3/guides/using_resumable_upload_protocol
    if (
      total !== undefined &&
      session.receivedBytes + body.length < total &&
      body.length % (256 * 1024) !== 0
    ) {
      googleError(
        res,
        400,
        'badContent',
        'The chunk size must be a multiple of 256 KiB except for the last chunk.',
        'INVALID_ARGUMENT',
      );
      return;
    }
    session.received.update(body);
    session.receivedBytes += body.length;
    if (total !== undefined && session.receivedBytes < total) {
      res
        .set('Range', `bytes=0-${session.receivedBytes - 1}`)
        .status(308)
        .end();
      return;
    }
    if (total !== undefined && session.receivedBytes > total) {
      googleError(
        res,
        400,
        'badContent',
        'The uploaded content is longer than declared.',
        'INVALID_ARGUMENT',
      );
      return;
    }
    const id = sim.nextUuid().replace(/-/g, '').slice(0, 11);
    const snippet = { ...session.metadata.snippet, channelId: 'UCsimchannel000000000000' };
    const bytes = session.receivedBytes;
    const sha256 = session.received.digest('hex');
    session.video = {
      kind: 'youtube#video',
      etag: 'sim-etag',
      id,
      snippet,
      status: {
        uploadStatus: 'uploaded',
        privacyStatus: youtubeProjectOf(sim).unverified
          ? 'private'
          : (session.metadata.status?.privacyStatus ?? 'public'),
      },
    };
    sim.addPost({
      platform: 'youtube',
      remoteId: id,
      text: snippet.description ?? '',
      replyTo: null,
      media: { title: snippet.title, contentType: session.contentType, bytes, sha256 },
      idempotencyKey: null,
    });
    if (session.hang) res.locals.hangAfterCreate = true;
    answerOrHang(res, () => res.json(session.video));
  });

  // videos.list by id, `part=status` (https://developers.google.com/youtube/v3/docs/videos/list).
  router.get('/youtube/v3/videos', (req, res, next) => {
    // `part=statistics` (metrics reads) is answered by youtube-metrics.sim.ts.
    if (
      String(req.query.part ?? '')
        .split(',')
        .includes('statistics')
    )
      return next();
    const ids = String(req.query.id ?? '')
      .split(',')
      .filter(Boolean)
      .slice(0, 50);
    if (ids.length === 0 || typeof req.query.part !== 'string') {
      googleError(res, 400, 'missingRequiredParameter', 'No filter selected.', 'INVALID_ARGUMENT');
      return;
    }
    const items = ids.flatMap((id) => {
      const session = [...sessions.values()].find((s) => s.video?.id === id);
      const post = sim.getPost('youtube', id);
      if (!session?.video || !post || post.deleted) return [];
      return [{ kind: 'youtube#video', etag: 'sim-etag', id, status: session.video.status }];
    });
    res.json({ kind: 'youtube#videoListResponse', items, pageInfo: { totalResults: items.length } });
  });

  registerYoutubeCommentsSim(router, sim);

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
