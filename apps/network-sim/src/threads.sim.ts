import type { Response, Router } from 'express';
import {
  GRAPH_NOT_READY,
  graphError,
  graphList,
  graphObjectMissing,
  graphTime,
  graphUserOf,
  requireGraphToken,
  versionedGraphRouter,
} from './graph-sim.js';
import { pulledRecord, pullMedia, type TPull } from './media-pull.sim.js';
import { answerOrHang, networkMiddleware, type SimState, type TErrorRenderer } from './sim-state.js';
import { THREADS_TEXT_MAX, threadsTextLength } from './text-limits.sim.js';

/** Graph-style errors: expired tokens are code 190 and throttling is code 4, both answered with HTTP 400. */
const renderThreadsError: TErrorRenderer = (res, fault) => {
  switch (fault.kind) {
    case 'auth_expired':
      graphError(res, 400, 190, 'Error validating access token: Session has expired.', {
        error_subcode: 463,
      });
      return;
    case 'rate_limited': {
      const minutes = Math.max(1, Math.ceil((fault.retryAfterSeconds ?? 60) / 60));
      res.set({
        'x-app-usage': JSON.stringify({ call_count: 100, total_cputime: 20, total_time: 30 }),
        'x-business-use-case-usage': JSON.stringify({
          sim: [
            {
              type: 'threads',
              call_count: 100,
              total_cputime: 20,
              total_time: 30,
              estimated_time_to_regain_access: minutes,
            },
          ],
        }),
      });
      graphError(res, 400, 4, 'Application request limit reached', { is_transient: true });
      return;
    }
    case 'rejected':
      graphError(res, 400, 100, 'Invalid parameter', { error_user_msg: 'The text is too long.' });
      return;
    default:
      graphError(res, 500, 2, 'An unexpected error has occurred. Please retry your request later.', {
        is_transient: true,
      });
  }
};

interface TContainer {
  media_type?: string;
  text?: string;
  image_url?: string;
  video_url?: string;
  reply_to_id?: string;
  children?: string;
  is_carousel_item?: boolean | string;
  alt_text?: string;
  /** Status reads so far: a video is IN_PROGRESS until it has been read once (its processing time). */
  reads: number;
  createdAt: number;
  /** Threads' fetch of the container's media URL, when the simulator plays it (`sim.fetchPulledMedia`). */
  pull?: TPull;
}

/** Threads is served as v1.0 only (graph.threads.net/v1.0). https://developers.facebook.com/docs/threads */
const threadsVersionAvailable = (version: string) => version === 'v1.0';
const MAX_CAROUSEL_ITEMS = 20;

export function registerThreadsSim(router: Router, sim: SimState): void {
  const containers = new Map<string, TContainer>();
  const permalinks = new Map<string, string>();
  router.use(networkMiddleware(sim, 'threads', renderThreadsError));
  const api = versionedGraphRouter(router, threadsVersionAvailable, 'v1.0');

  const failed = (c: TContainer) =>
    (c.video_url ?? '').includes('fail-processing') || c.pull?.state === 'failed';
  /**
   * The container's `error_message` when it is ERROR, from the list on
   * https://developers.facebook.com/docs/threads/troubleshooting: a video Threads could not download is
   * FAILED_DOWNLOADING_VIDEO; the list names nothing for images, so an image it could not fetch (or that
   * is not an image) is UNKNOWN (modeled), and a video whose bytes are not a video FAILED_PROCESSING_VIDEO.
   */
  const errorMessage = (c: TContainer): string => {
    if (c.pull?.state !== 'failed') return 'FAILED_PROCESSING_VIDEO';
    if (!c.video_url) return 'UNKNOWN';
    return c.pull.reason === 'not_media' ? 'FAILED_PROCESSING_VIDEO' : 'FAILED_DOWNLOADING_VIDEO';
  };
  /** Starts Threads' fetch of the container's media, after the container is answered. */
  const startPull = (c: TContainer) => {
    const url = c.video_url ?? c.image_url;
    if (!sim.fetchPulledMedia || !url || (c.media_type !== 'IMAGE' && c.media_type !== 'VIDEO')) return;
    const kind = c.media_type === 'VIDEO' ? 'video' : 'image';
    c.pull = { state: 'fetching', url };
    // Bounded by the simulator's own caps (SimState.pullLimits), not a quoted Threads limit.
    const { timeoutMs, imageMaxBytes, videoMaxBytes } = sim.pullLimits;
    void pullMedia(url, kind, { timeoutMs, maxBytes: kind === 'video' ? videoMaxBytes : imageMaxBytes }).then(
      (pull) => {
        c.pull = pull;
      },
    );
  };
  const ready = (c: TContainer): boolean => {
    if (failed(c)) return false;
    if (c.pull?.state === 'fetching') return false;
    if (c.video_url && (c.reads < 2 || !sim.processed('threads', c.createdAt))) return false;
    return (c.children ?? '')
      .split(',')
      .filter(Boolean)
      .every((id) => {
        const child = containers.get(id);
        return child !== undefined && ready(child);
      });
  };
  const notReady = (res: Response) => {
    const e = GRAPH_NOT_READY.threads;
    graphError(res, e.status, e.code, e.message, e.extra);
  };

  api.post('/:userId/threads', (req, res) => {
    if (!requireGraphToken(req, res)) return;
    const body = {
      ...(req.query as Record<string, unknown>),
      ...((req.body ?? {}) as Record<string, unknown>),
    } as Omit<TContainer, 'reads' | 'createdAt'>;
    const type = body.media_type;
    const missing =
      (type === 'TEXT' && !body.text) ||
      (type === 'IMAGE' && !body.image_url) ||
      (type === 'VIDEO' && !body.video_url) ||
      (type === 'CAROUSEL' && !body.children);
    if (!type || !['TEXT', 'IMAGE', 'VIDEO', 'CAROUSEL'].includes(type) || missing) {
      graphError(res, 400, 100, 'Invalid parameter', {
        error_user_msg: 'media_type or its media is missing.',
      });
      return;
    }
    // Threads refuses an over-long text when the container is made, with Graph code 100
    // (https://github.com/gesteves/denali/pull/1285); the message is modeled, no page quotes it.
    const textLength = typeof body.text === 'string' ? threadsTextLength(body.text) : 0;
    if (textLength > THREADS_TEXT_MAX) {
      graphError(res, 400, 100, 'Invalid parameter', {
        error_user_title: 'Text too long',
        error_user_msg: `The text is ${textLength} characters (emoji count their UTF-8 bytes); at most ${THREADS_TEXT_MAX} are allowed.`,
      });
      return;
    }
    if (body.reply_to_id && !sim.getPost('threads', body.reply_to_id)) {
      graphError(res, 400, 100, 'Invalid parameter', {
        error_user_msg: 'The post to reply to does not exist.',
      });
      return;
    }
    if (type === 'CAROUSEL') {
      // https://developers.facebook.com/docs/threads/posts#carousel-posts: 2 to 20 items.
      const children = String(body.children).split(',').filter(Boolean);
      if (children.length < 2 || children.length > MAX_CAROUSEL_ITEMS) {
        graphError(res, 400, 100, 'Invalid parameter', {
          error_user_msg: `A carousel holds 2 to ${MAX_CAROUSEL_ITEMS} items, got ${children.length}.`,
        });
        return;
      }
      const items = children.map((c) => containers.get(c));
      if (items.some((c) => !c?.is_carousel_item)) {
        graphError(res, 400, 100, 'Invalid parameter', {
          error_user_msg: 'children must be carousel items.',
        });
        return;
      }
    }
    const id = sim.nextNumericId();
    const made: TContainer = { ...body, reads: 0, createdAt: Date.now() };
    containers.set(id, made);
    res.json({ id });
    startPull(made);
  });

  api.post('/:userId/threads_publish', (req, res) => {
    if (!requireGraphToken(req, res)) return;
    const creationId = String(
      req.query.creation_id ?? (req.body as { creation_id?: string } | undefined)?.creation_id ?? '',
    );
    const container = containers.get(creationId);
    // An unknown container and one not FINISHED yet get the same answer from Threads.
    if (!container || container.is_carousel_item || !ready(container)) {
      notReady(res);
      return;
    }
    containers.delete(creationId);
    // What Threads fetched for this post (itself or its carousel items); only when the fetch was played.
    const pulled = [
      container,
      ...String(container.children ?? '')
        .split(',')
        .map((c) => containers.get(c)),
    ]
      .map((c) => pulledRecord(c?.pull))
      .filter((p) => p !== null);
    const id = sim.nextNumericId();
    permalinks.set(id, `https://www.threads.net/@sim/post/C${id.slice(-10)}`);
    sim.addPost({
      platform: 'threads',
      remoteId: id,
      text: container.text ?? '',
      replyTo: container.reply_to_id ?? null,
      media: {
        media_type: container.media_type,
        image_url: container.image_url,
        video_url: container.video_url,
        alt_text: container.alt_text,
        children: container.children,
        ...(pulled.length > 0 ? { pulled } : {}),
      },
      idempotencyKey: null,
      author: graphUserOf(sim, 'threads', req, req.params.userId),
    });
    answerOrHang(res, () => res.json({ id }));
  });

  /**
   * The user's own posts: `/threads` lists top-level posts, `/replies` the user's replies (with
   * `replied_to`), newest first with Graph paging and `since`/`until`.
   * https://developers.facebook.com/documentation/threads/retrieve-and-discover-posts/retrieve-posts
   * https://developers.facebook.com/docs/threads/retrieve-and-manage-replies
   */
  for (const edge of ['threads', 'replies'] as const) {
    api.get(`/:userId/${edge}`, (req, res) => {
      if (!requireGraphToken(req, res)) return;
      const author = graphUserOf(sim, 'threads', req, req.params.userId);
      const posts = sim
        .timelineOf('threads', author)
        .filter((p) => (edge === 'replies') === (p.replyTo !== null));
      graphList(req, res, posts, (p, fields) => {
        const media = p.media as { media_type?: string } | null;
        return {
          id: p.remoteId,
          ...(fields.has('text') ? { text: p.text } : {}),
          ...(fields.has('timestamp') ? { timestamp: graphTime(p.at) } : {}),
          ...(fields.has('permalink') ? { permalink: permalinks.get(p.remoteId) } : {}),
          ...(fields.has('media_type')
            ? { media_type: media?.media_type === 'TEXT' ? 'TEXT_POST' : (media?.media_type ?? 'TEXT_POST') }
            : {}),
          ...(fields.has('is_reply') ? { is_reply: p.replyTo !== null } : {}),
          ...(fields.has('replied_to') && p.replyTo ? { replied_to: { id: p.replyTo } } : {}),
        };
      });
    });
  }

  api.get('/:id', (req, res) => {
    if (!requireGraphToken(req, res)) return;
    const pending = containers.get(req.params.id);
    if (pending) {
      // https://developers.facebook.com/docs/threads/troubleshooting: status and error_message.
      pending.reads += 1;
      const status = failed(pending) ? 'ERROR' : ready(pending) ? 'FINISHED' : 'IN_PROGRESS';
      res.json({
        id: req.params.id,
        status,
        ...(status === 'ERROR' ? { error_message: errorMessage(pending) } : {}),
      });
      return;
    }
    const post = sim.getPost('threads', req.params.id);
    if (!post || post.deleted) {
      graphObjectMissing(res);
      return;
    }
    res.json({ id: post.remoteId, permalink: permalinks.get(post.remoteId) });
  });

  api.delete('/:id', (req, res) => {
    if (!requireGraphToken(req, res)) return;
    const post = sim.getPost('threads', req.params.id);
    if (!post || post.deleted) {
      res.status(404).json({
        error: { message: 'Object not found', type: 'OAuthException', code: 100, error_subcode: 33 },
      });
      return;
    }
    post.deleted = true;
    res.json({ success: true });
  });
}
