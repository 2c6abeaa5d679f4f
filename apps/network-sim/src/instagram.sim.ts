import type { Request, Response, Router } from 'express';
import { registerInstagramCommentsSim } from './comments.sim.js';
import {
  GRAPH_LATEST_VERSION,
  GRAPH_NOT_READY,
  graphError,
  graphList,
  graphTime,
  graphUserOf,
  graphVersionAvailable,
  versionedGraphRouter,
} from './graph-sim.js';
import { pulledRecord, pullMedia, type TPull } from './media-pull.sim.js';
import { answerOrHang, networkMiddleware, type SimState, type TErrorRenderer } from './sim-state.js';
import { instagramCaptionProblem } from './text-limits.sim.js';

const renderInstagramError: TErrorRenderer = (res, fault) => {
  switch (fault.kind) {
    case 'auth_expired':
      graphError(res, 400, 190, 'Error validating access token: Session has expired.');
      return;
    case 'rate_limited':
      res.set('Retry-After', String(fault.retryAfterSeconds ?? 1));
      graphError(res, 429, 4, 'Application request limit reached');
      return;
    case 'rejected':
      graphError(res, 400, 100, 'Invalid parameter', { type: 'IGApiException' });
      return;
    default:
      graphError(res, 503, 2, 'An unexpected error has occurred. Please retry your request later.');
  }
};

interface TContainer {
  id: string;
  userId: string;
  fields: Record<string, string>;
  statusChecks: number;
  published: boolean;
  createdAt: number;
  /** Instagram's fetch of the container's media URL, when the simulator plays it (`sim.fetchPulledMedia`). */
  pull?: TPull;
}

function token(req: Request): string | undefined {
  const header = req.headers.authorization;
  if (header?.startsWith('Bearer ') && header.length > 7) return header.slice(7);
  return typeof req.query.access_token === 'string' && req.query.access_token
    ? req.query.access_token
    : undefined;
}

/** Graph API takes parameters from the query string or a form/JSON body. */
function params(req: Request): Record<string, string> {
  const out: Record<string, string> = {};
  const body = req.body && typeof req.body === 'object' && !Buffer.isBuffer(req.body) ? req.body : {};
  for (const [key, value] of Object.entries({ ...req.query, ...body })) {
    if (typeof value === 'string') out[key] = value;
  }
  return out;
}

/**
 * Instagram content publishing: media containers (`POST /{ig-user-id}/media`), container status
 * (`GET /{container-id}?fields=status_code`), `POST /{ig-user-id}/media_publish`, and the
 * permalink lookup (`GET /{media-id}?fields=permalink`). Video containers answer IN_PROGRESS on the
 * first status check; a video URL containing `fail-processing` ends in ERROR.
 */
export function registerInstagramSim(router: Router, sim: SimState): void {
  const containers = new Map<string, TContainer>();
  const published = new Map<string, { shortcode: string; containerId: string }>();
  // A hang injected on a container call is carried to the publish call: the fault means "the post
  // was created but its answer was lost", whichever step of the flow consumed it.
  let pendingHang = false;

  router.use(networkMiddleware(sim, 'instagram', renderInstagramError));
  router.use((req, res, next) => {
    if (token(req)) return next();
    graphError(res, 401, 190, 'Invalid OAuth access token - Cannot parse access token');
  });
  const api = versionedGraphRouter(router, graphVersionAvailable, GRAPH_LATEST_VERSION);

  const hasVideo = (c: TContainer) =>
    Boolean(c.fields.video_url) ||
    (c.fields.children ?? '').split(',').some((id) => containers.get(id)?.fields.video_url);
  const failed = (c: TContainer) =>
    (c.fields.video_url ?? '').includes('fail-processing') || c.pull?.state === 'failed';
  /** Video takes processing time, modeled as one status read; images are ready once fetched (or at once). */
  const ready = (c: TContainer) =>
    !failed(c) &&
    c.pull?.state !== 'fetching' &&
    (!hasVideo(c) || (c.statusChecks >= 2 && sim.processed('instagram', c.createdAt)));
  /**
   * The container's `status` when it is ERROR: Instagram answers the error subcode there (ig-container
   * reference). Subcodes from https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/error-codes:
   * 2207003 "It takes too long to download the media", 2207004 "The image is too large to download";
   * 2207026 (unsupported video format, as before) for bytes that are not the video asked for. Modeled:
   * 2207052 for a URL that cannot be fetched or images that are not images (the page excerpt does not
   * show the subcode Instagram gives those).
   */
  const errorStatus = (c: TContainer): string => {
    if (c.pull?.state !== 'failed') return 'Error: 2207026';
    if (c.pull.reason === 'timeout') return 'Error: 2207003';
    if (c.pull.reason === 'too_large' && !c.fields.video_url) return 'Error: 2207004';
    if (c.pull.reason === 'not_media' && c.fields.video_url) return 'Error: 2207026';
    return 'Error: 2207052';
  };
  /** Starts Instagram's fetch of the container's media, after the container is answered. */
  const startPull = (c: TContainer) => {
    const url = c.fields.video_url ?? c.fields.image_url;
    if (!sim.fetchPulledMedia || !url) return;
    const kind = c.fields.video_url ? 'video' : 'image';
    c.pull = { state: 'fetching', url };
    const { timeoutMs, imageMaxBytes, videoMaxBytes } = sim.pullLimits;
    void pullMedia(url, kind, { timeoutMs, maxBytes: kind === 'video' ? videoMaxBytes : imageMaxBytes }).then(
      (pull) => {
        c.pull = pull;
      },
    );
  };
  const notReady = (res: Response) => {
    const e = GRAPH_NOT_READY.instagram;
    graphError(res, e.status, e.code, e.message, { type: 'IGApiException', ...e.extra });
  };

  api.post('/:userId/media', (req, res) => {
    const fields = params(req);
    const isCarousel = fields.media_type === 'CAROUSEL';
    if (!fields.image_url && !fields.video_url && !isCarousel) {
      graphError(res, 400, 100, 'The parameter image_url or video_url is required', {
        type: 'IGApiException',
      });
      return;
    }
    // The caption's limits are checked when the container is made. Modeled: no page quotes Instagram's
    // refusal, so it is the Graph's invalid-parameter error (code 100) naming the limit.
    const captionProblem = fields.caption ? instagramCaptionProblem(fields.caption) : null;
    if (captionProblem) {
      graphError(res, 400, 100, 'Invalid parameter', {
        type: 'IGApiException',
        error_user_title: 'Invalid caption',
        error_user_msg: captionProblem,
      });
      return;
    }
    if (isCarousel) {
      const children = (fields.children ?? '').split(',').filter(Boolean);
      // https://developers.facebook.com/docs/instagram-platform/content-publishing#carousel-posts (2 to 10 items)
      if (children.length < 2 || children.length > 10) {
        graphError(res, 400, 100, 'Invalid parameter', {
          type: 'IGApiException',
          error_user_msg: `A carousel holds 2 to 10 items, got ${children.length}.`,
        });
        return;
      }
      if (!children.every((id) => containers.has(id))) {
        graphError(res, 400, 100, 'Invalid children container id', { type: 'IGApiException' });
        return;
      }
      const unfinished = children.map((id) => containers.get(id));
      if (unfinished.some((c) => !c || !ready(c))) {
        notReady(res);
        return;
      }
    }
    const id = sim.nextNumericId();
    const container: TContainer = {
      id,
      userId: req.params.userId ?? 'me',
      fields,
      statusChecks: 0,
      published: false,
      createdAt: Date.now(),
    };
    containers.set(id, container);
    if (res.locals.hangAfterCreate) pendingHang = true;
    res.json({ id });
    startPull(container);
  });

  api.post('/:userId/media_publish', (req, res) => {
    const container = containers.get(params(req).creation_id ?? '');
    if (!container || container.fields.is_carousel_item) {
      graphError(res, 400, 24, 'The media with id is not ready to be published', { type: 'IGApiException' });
      return;
    }
    if (container.published) {
      graphError(res, 400, 9007, 'The media has already been published', { type: 'IGApiException' });
      return;
    }
    if (!ready(container)) {
      notReady(res);
      return;
    }
    container.published = true;
    const mediaId = sim.nextNumericId();
    const { fields } = container;
    const childContainers = (fields.children ?? '')
      .split(',')
      .filter(Boolean)
      .map((id) => containers.get(id));
    const childMedia = childContainers.map((c) => c?.fields);
    // What Instagram fetched for this post (itself or its carousel items); only when the fetch was played.
    const pulled = [container, ...childContainers]
      .map((c) => pulledRecord(c?.pull))
      .filter((p) => p !== null);
    sim.addPost({
      platform: 'instagram',
      remoteId: mediaId,
      text: fields.caption ?? '',
      replyTo: null,
      media: {
        ...(fields.media_type === 'CAROUSEL' ? { type: 'CAROUSEL', children: childMedia } : fields),
        ...(pulled.length > 0 ? { pulled } : {}),
      },
      idempotencyKey: null,
      author: graphUserOf(sim, 'instagram', req, req.params.userId),
    });
    published.set(mediaId, { shortcode: `Sim${mediaId.slice(-8)}`, containerId: container.id });
    if (pendingHang) {
      pendingHang = false;
      res.locals.hangAfterCreate = true;
    }
    answerOrHang(res, () => res.json({ id: mediaId }));
  });

  /**
   * The account's published media, newest first (`caption`, `timestamp`, `permalink`, `media_type`), with
   * Graph paging and `since`/`until`.
   * https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-user/media
   */
  api.get('/:userId/media', (req, res) => {
    const author = graphUserOf(sim, 'instagram', req, req.params.userId);
    graphList(req, res, sim.timelineOf('instagram', author), (p, fields) => {
      const media = p.media as { type?: string; media_type?: string } | null;
      const type =
        media?.type === 'CAROUSEL' ? 'CAROUSEL_ALBUM' : media?.media_type === 'REELS' ? 'VIDEO' : 'IMAGE';
      const shortcode = published.get(p.remoteId)?.shortcode;
      return {
        id: p.remoteId,
        ...(fields.has('caption') && p.text ? { caption: p.text } : {}),
        ...(fields.has('timestamp') ? { timestamp: graphTime(p.at) } : {}),
        ...(fields.has('media_type') ? { media_type: type } : {}),
        ...(fields.has('permalink') && shortcode
          ? { permalink: `https://www.instagram.com/p/${shortcode}/` }
          : {}),
      };
    });
  });

  registerInstagramCommentsSim(api, sim, params);

  api.get('/:id', (req, res) => {
    const id = req.params.id ?? '';
    const container = containers.get(id);
    if (container) {
      container.statusChecks += 1;
      const status = failed(container)
        ? 'ERROR'
        : container.published
          ? 'PUBLISHED'
          : ready(container)
            ? 'FINISHED'
            : 'IN_PROGRESS';
      res.json({ id, status_code: status, status: failed(container) ? errorStatus(container) : status });
      return;
    }
    const media = published.get(id);
    if (media && !sim.getPost('instagram', id)?.deleted) {
      res.json({ id, permalink: `https://www.instagram.com/p/${media.shortcode}/` });
      return;
    }
    graphError(res, 400, 100, `Unsupported get request. Object with ID '${id}' does not exist`, {
      type: 'GraphMethodException',
    });
  });
}
