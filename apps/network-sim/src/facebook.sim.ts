import type { Request, Response, Router } from 'express';
import { registerFacebookUploads } from './facebook-upload.sim.js';
import {
  GRAPH_LATEST_VERSION,
  graphError,
  graphList,
  graphTime,
  graphVersionAvailable,
  requireGraphToken,
  versionedGraphRouter,
} from './graph-sim.js';
import { answerOrHang, networkMiddleware, type SimState, type TErrorRenderer } from './sim-state.js';
import { FACEBOOK_TEXT_MAX } from './text-limits.sim.js';

/** Graph API errors: expired tokens are code 190 and page throttling code 32, both answered with HTTP 400. */
const renderFacebookError: TErrorRenderer = (res, fault) => {
  switch (fault.kind) {
    case 'auth_expired':
      graphError(res, 400, 190, 'Error validating access token: Session has expired.', {
        error_subcode: 463,
      });
      return;
    case 'rate_limited': {
      const minutes = Math.max(1, Math.ceil((fault.retryAfterSeconds ?? 60) / 60));
      res.set(
        'x-business-use-case-usage',
        JSON.stringify({
          sim: [
            {
              type: 'pages',
              call_count: 100,
              total_cputime: 10,
              total_time: 10,
              estimated_time_to_regain_access: minutes,
            },
          ],
        }),
      );
      graphError(res, 400, 32, 'Page request limit reached', { is_transient: true });
      return;
    }
    case 'rejected':
      graphError(res, 400, 100, 'Invalid parameter', { error_user_msg: 'The message is invalid.' });
      return;
    default:
      graphError(res, 500, 2, 'An unexpected error has occurred. Please retry your request later.', {
        is_transient: true,
      });
  }
};

type TBody = Record<string, unknown>;

/**
 * A Page post's text (`message`, a photo's `caption`, a video's `description`) over FACEBOOK_TEXT_MAX.
 * Modeled: no page quotes Facebook's refusal, so it is the Graph's invalid-parameter error (code 100).
 */
function refusedLongText(res: Response, field: string, value: unknown): boolean {
  if (typeof value !== 'string' || value.length <= FACEBOOK_TEXT_MAX) return false;
  graphError(res, 400, 100, 'Invalid parameter', {
    error_user_title: 'Text too long',
    error_user_msg: `The ${field} is ${value.length} characters; at most ${FACEBOOK_TEXT_MAX} are allowed.`,
  });
  return true;
}

export function registerFacebookSim(router: Router, sim: SimState): void {
  const unpublishedPhotos = new Set<string>();
  router.use(networkMiddleware(sim, 'facebook', renderFacebookError));
  const api = versionedGraphRouter(router, graphVersionAvailable, GRAPH_LATEST_VERSION);
  const uploadedFile = registerFacebookUploads(api);

  const bodyOf = (req: Request): TBody => ({ ...(req.query as TBody), ...((req.body ?? {}) as TBody) });
  const create = (pageId: string, text: string, replyTo: string | null, media: unknown) =>
    sim.addPost({
      platform: 'facebook',
      remoteId: `${pageId}_${sim.nextNumericId()}`,
      text,
      replyTo,
      media,
      idempotencyKey: null,
      author: pageId,
    });

  /**
   * The Page's own published posts, newest first (`message`, `created_time`, `permalink_url`), with Graph
   * paging and `since`/`until`. https://developers.facebook.com/docs/graph-api/reference/page/published_posts/
   */
  api.get('/:pageId/published_posts', (req, res) => {
    if (!requireGraphToken(req, res)) return;
    const posts = sim.timelineOf('facebook', req.params.pageId ?? '').filter((p) => p.replyTo === null);
    graphList(req, res, posts, (p, fields) => ({
      id: p.remoteId,
      ...(fields.has('message') && p.text ? { message: p.text } : {}),
      ...(fields.has('created_time') ? { created_time: graphTime(p.at) } : {}),
      ...(fields.has('permalink_url') ? { permalink_url: `https://www.facebook.com/${p.remoteId}` } : {}),
    }));
  });

  api.post('/:pageId/feed', (req, res) => {
    if (!requireGraphToken(req, res)) return;
    const body = bodyOf(req);
    const attached = (body.attached_media ?? []) as { media_fbid?: string }[];
    if (!body.message && !body.link && attached.length === 0) {
      graphError(res, 400, 100, 'Invalid parameter', { error_user_msg: 'The post is empty.' });
      return;
    }
    if (refusedLongText(res, 'message', body.message)) return;
    if (attached.some((m) => !m.media_fbid || !unpublishedPhotos.has(m.media_fbid))) {
      graphError(res, 400, 100, 'Invalid parameter', {
        error_user_msg: 'attached_media must be unpublished photos.',
      });
      return;
    }
    const post = create(req.params.pageId, String(body.message ?? ''), null, {
      attached_media: attached,
      link: body.link ?? null,
    });
    answerOrHang(res, () => res.json({ id: post.remoteId }));
  });

  api.post('/:pageId/photos', (req, res) => {
    if (!requireGraphToken(req, res)) return;
    const body = bodyOf(req);
    if (!body.url) {
      graphError(res, 400, 324, 'Requires upload file');
      return;
    }
    if (refusedLongText(res, 'caption', body.caption)) return;
    const photoId = sim.nextNumericId();
    if (body.published === false || body.published === 'false') {
      unpublishedPhotos.add(photoId);
      res.json({ id: photoId });
      return;
    }
    const post = create(req.params.pageId, String(body.caption ?? ''), null, {
      photo: body.url,
      alt_text_custom: body.alt_text_custom ?? null,
    });
    answerOrHang(res, () => res.json({ id: photoId, post_id: post.remoteId }));
  });

  /**
   * A Page video: `fbuploader_video_file_chunk` (a Resumable Upload API handle, the current guide's way,
   * served on graph-video.facebook.com) or `file_url` (Facebook fetches the file).
   * https://developers.facebook.com/docs/video-api/guides/publishing
   * Modeled: neither given is Graph's code 100; an unknown handle too (no page quotes the refusal).
   */
  api.post('/:pageId/videos', (req, res) => {
    if (!requireGraphToken(req, res)) return;
    const body = bodyOf(req);
    const handle = body.fbuploader_video_file_chunk;
    if (!body.file_url && !handle) {
      graphError(res, 400, 100, '(#100) Invalid parameter', {
        error_user_msg: 'A video needs fbuploader_video_file_chunk (an uploaded file handle) or file_url.',
      });
      return;
    }
    const file = typeof handle === 'string' ? uploadedFile(handle) : undefined;
    if (handle && !file) {
      graphError(res, 400, 100, '(#100) Invalid parameter', {
        error_user_msg: 'fbuploader_video_file_chunk is not a valid uploaded file handle.',
      });
      return;
    }
    if (refusedLongText(res, 'description', body.description)) return;
    const post = create(
      req.params.pageId,
      String(body.description ?? ''),
      null,
      file ? { video: { handle, ...file } } : { video: body.file_url },
    );
    answerOrHang(res, () => res.json({ id: post.remoteId }));
  });

  api.post('/:objectId/comments', (req, res) => {
    if (!requireGraphToken(req, res)) return;
    const body = bodyOf(req);
    const parent = sim.getPost('facebook', req.params.objectId);
    if (!parent || parent.deleted) {
      graphError(res, 400, 100, 'Unsupported post request. Object does not exist', { error_subcode: 33 });
      return;
    }
    const id = `${req.params.objectId.split('_').pop()}_${sim.nextNumericId()}`;
    sim.addPost({
      platform: 'facebook',
      remoteId: id,
      text: String(body.message ?? ''),
      replyTo: parent.remoteId,
      media: body.attachment_url ?? null,
      idempotencyKey: null,
    });
    answerOrHang(res, () => res.json({ id }));
  });

  /**
   * A post's comments (`GET /{object-id}/comments`), oldest first (`order=chronological`, the default) or
   * newest first (`reverse_chronological`), fields `id`, `message`, `created_time`, `from`, with Graph paging and `since`/`until`; an unknown
   * post is code 100 (subcode 33). https://developers.facebook.com/docs/graph-api/reference/object/comments
   */
  api.get('/:objectId/comments', (req, res) => {
    if (!requireGraphToken(req, res)) return;
    const parent = sim.getPost('facebook', req.params.objectId);
    if (!parent || parent.deleted) {
      graphError(res, 400, 100, 'Unsupported get request. Object does not exist', { error_subcode: 33 });
      return;
    }
    const comments = sim.postsOf('facebook').filter((p) => p.replyTo === parent.remoteId && !p.deleted);
    const order = req.query.order ?? 'chronological';
    if (order !== 'chronological' && order !== 'reverse_chronological') {
      graphError(res, 400, 100, '(#100) param order must be one of {CHRONOLOGICAL, REVERSE_CHRONOLOGICAL}');
      return;
    }
    if (order === 'reverse_chronological') comments.reverse();
    graphList(req, res, comments, (p, fields) => ({
      id: p.remoteId,
      ...(fields.has('message') ? { message: p.text } : {}),
      ...(fields.has('created_time') ? { created_time: graphTime(p.at) } : {}),
      // The service comments as the Page that made the post.
      ...(fields.has('from') && parent.author ? { from: { id: parent.author, name: parent.author } } : {}),
    }));
  });

  api.delete('/:id', (req, res) => {
    if (!requireGraphToken(req, res)) return;
    const post = sim.getPost('facebook', req.params.id);
    if (!post || post.deleted) {
      res.status(404).json({
        error: { message: 'Object not found', type: 'GraphMethodException', code: 100, error_subcode: 33 },
      });
      return;
    }
    post.deleted = true;
    res.json({ success: true });
  });
}
