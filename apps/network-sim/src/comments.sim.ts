import type { Request, Response, Router } from 'express';
import { graphError, graphList, graphTime } from './graph-sim.js';
import { answerOrHang, type SimState, type TSimPost } from './sim-state.js';

// Comments under a post that a post's first comment makes on Instagram and YouTube (Facebook and LinkedIn
// comments are in their own sims). The scope each needs is checked by the scope guard.

/** Instagram refuses a comment over 2,200 characters (as its captions) with the Graph's invalid parameter. */
const INSTAGRAM_COMMENT_MAX = 2200;
/** YouTube comments take up to 10,000 characters; longer is `commentTextTooLong`. */
const YOUTUBE_COMMENT_MAX = 10_000;

/**
 * `POST /{ig-media-id}/comments?message=…` answers `{id}`; an unknown or deleted media is code 100
 * (subcode 33), an empty message code 100.
 * https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-media/comments
 */
export function registerInstagramCommentsSim(
  api: Router,
  sim: SimState,
  params: (req: Request) => Record<string, string>,
) {
  api.post('/:mediaId/comments', (req, res) => {
    const mediaId = req.params.mediaId ?? '';
    const parent = sim.getPost('instagram', mediaId);
    if (!parent || parent.deleted || parent.replyTo !== null) {
      graphError(
        res,
        400,
        100,
        `Unsupported post request. Object with ID '${mediaId}' does not exist, cannot be loaded due to missing permissions, or does not support this operation.`,
        { type: 'GraphMethodException', error_subcode: 33 },
      );
      return;
    }
    const message = params(req).message ?? '';
    if (!message.trim() || Array.from(message).length > INSTAGRAM_COMMENT_MAX) {
      graphError(res, 400, 100, 'Invalid parameter', {
        type: 'IGApiException',
        error_user_msg: message.trim()
          ? `A comment holds at most ${INSTAGRAM_COMMENT_MAX} characters.`
          : 'The parameter message is required.',
      });
      return;
    }
    const id = sim.nextNumericId();
    // No author: comments are not the account's media (its media list and read-back skip them).
    sim.addPost({
      platform: 'instagram',
      remoteId: id,
      text: message,
      replyTo: mediaId,
      media: null,
      idempotencyKey: null,
    });
    answerOrHang(res, () => res.json({ id }));
  });

  // The media's comments, newest first, with Graph paging.
  api.get('/:mediaId/comments', (req, res) => {
    const mediaId = req.params.mediaId ?? '';
    graphList(req, res, commentsNewestFirst(sim, 'instagram', mediaId), (p, fields) => ({
      id: p.remoteId,
      ...(fields.has('text') ? { text: p.text } : {}),
      ...(fields.has('timestamp') ? { timestamp: graphTime(p.at) } : {}),
    }));
  });
}

/** The live comments on a post, newest first: the order both networks list them in. */
function commentsNewestFirst(sim: SimState, platform: 'instagram' | 'youtube', parentId: string): TSimPost[] {
  return sim
    .postsOf(platform)
    .filter((p) => p.replyTo === parentId && !p.deleted)
    .reverse();
}

function googleError(res: Response, code: number, reason: string, message: string, status: string): void {
  res.status(code).json({
    error: { code, message, errors: [{ message, domain: 'youtube.commentThread', reason }], status },
  });
}

/** The video a commentThreads call names, or undefined once answered with `videoNotFound` (404). */
function videoOrNotFound(sim: SimState, res: Response, videoId: string): TSimPost | undefined {
  const video = sim.getPost('youtube', videoId);
  if (video && !video.deleted && video.replyTo === null) return video;
  googleError(
    res,
    404,
    'videoNotFound',
    'The video identified by the videoId parameter could not be found.',
    'NOT_FOUND',
  );
  return undefined;
}

/**
 * A commentThread resource as insert and list answer it; `head` leads the thread's snippet and `comment`
 * follows `videoId` in the top-level comment's (each answer keeps its own field order).
 */
function commentThreadOf(
  id: string,
  videoId: string,
  head: Record<string, unknown>,
  comment: Record<string, unknown>,
) {
  return {
    kind: 'youtube#commentThread',
    id,
    snippet: {
      ...head,
      videoId,
      topLevelComment: { kind: 'youtube#comment', id, snippet: { videoId, ...comment } },
      canReply: true,
      totalReplyCount: 0,
      isPublic: true,
    },
  };
}

/**
 * `commentThreads.insert` (`POST /youtube/v3/commentThreads?part=snippet`) answers the commentThread with its
 * top-level comment; errors as its page lists them (videoNotFound 404, commentTextTooLong 400, a missing
 * text 400). `comments.delete` (`DELETE /youtube/v3/comments?id=…`) answers 204, commentNotFound 404.
 * https://developers.google.com/youtube/v3/docs/commentThreads/insert,
 * https://developers.google.com/youtube/v3/docs/comments/delete
 */
export function registerYoutubeCommentsSim(router: Router, sim: SimState) {
  router.post('/youtube/v3/commentThreads', (req, res) => {
    const snippet = (req.body as { snippet?: Record<string, unknown> } | undefined)?.snippet ?? {};
    const videoId = typeof snippet.videoId === 'string' ? snippet.videoId : '';
    const top = snippet.topLevelComment as { snippet?: { textOriginal?: unknown } } | undefined;
    const text = typeof top?.snippet?.textOriginal === 'string' ? top.snippet.textOriginal : '';
    if (req.query.part !== 'snippet') {
      googleError(
        res,
        400,
        'missingRequiredParameter',
        'No filter selected. Expected one of: part',
        'INVALID_ARGUMENT',
      );
      return;
    }
    const video = videoOrNotFound(sim, res, videoId);
    if (!video) return;
    if (!text.trim()) {
      googleError(
        res,
        400,
        'commentTextRequired',
        'The comment resource that is being inserted must specify a value for the snippet.topLevelComment.snippet.textOriginal property.',
        'INVALID_ARGUMENT',
      );
      return;
    }
    if (Array.from(text).length > YOUTUBE_COMMENT_MAX) {
      googleError(
        res,
        400,
        'commentTextTooLong',
        'The comment resource that is being inserted contains too many characters in the snippet.topLevelComment.snippet.textOriginal property.',
        'INVALID_ARGUMENT',
      );
      return;
    }
    const id = `Ug${sim.nextNumericId()}`;
    sim.addPost({
      platform: 'youtube',
      remoteId: id,
      text,
      replyTo: videoId,
      media: null,
      idempotencyKey: null,
    });
    answerOrHang(res, () =>
      res.json(
        commentThreadOf(
          id,
          videoId,
          { channelId: snippet.channelId },
          { textOriginal: text, textDisplay: text },
        ),
      ),
    );
  });

  /**
   * `commentThreads.list` with `videoId`: newest first (`order=time`, the default), `maxResults` 1-100
   * (default 20), `pageToken`/`nextPageToken`; exactly one filter (else 400 `missingRequiredParameter`), an
   * unknown video 404 `videoNotFound`. https://developers.google.com/youtube/v3/docs/commentThreads/list
   */
  router.get('/youtube/v3/commentThreads', (req, res) => {
    const videoId = typeof req.query.videoId === 'string' ? req.query.videoId : '';
    if (typeof req.query.part !== 'string' || !req.query.part.split(',').includes('snippet') || !videoId) {
      googleError(
        res,
        400,
        'missingRequiredParameter',
        'No filter selected. Expected one of: videoId, id, allThreadsRelatedToChannelId',
        'INVALID_ARGUMENT',
      );
      return;
    }
    const video = videoOrNotFound(sim, res, videoId);
    if (!video) return;
    const max = Math.min(100, Math.max(1, Number(req.query.maxResults ?? 20) || 20));
    const offset =
      typeof req.query.pageToken === 'string'
        ? Number(Buffer.from(req.query.pageToken, 'base64url').toString()) || 0
        : 0;
    const threads = commentsNewestFirst(sim, 'youtube', videoId);
    const page = threads.slice(offset, offset + max);
    const next =
      offset + max < threads.length ? Buffer.from(String(offset + max)).toString('base64url') : null;
    // The service comments as the channel that uploaded the video.
    const channel = video.author;
    res.json({
      kind: 'youtube#commentThreadListResponse',
      ...(next ? { nextPageToken: next } : {}),
      pageInfo: { totalResults: threads.length, resultsPerPage: max },
      items: page.map((p) =>
        commentThreadOf(
          p.remoteId,
          videoId,
          {},
          {
            textDisplay: p.text,
            textOriginal: p.text,
            ...(channel ? { authorChannelId: { value: channel } } : {}),
            publishedAt: p.at,
            updatedAt: p.at,
          },
        ),
      ),
    });
  });

  router.delete('/youtube/v3/comments', (req, res) => {
    const id = typeof req.query.id === 'string' ? req.query.id : '';
    const comment = sim.getPost('youtube', id);
    if (!comment || comment.deleted || comment.replyTo === null) {
      googleError(
        res,
        404,
        'commentNotFound',
        'The comment identified by the id parameter could not be found.',
        'NOT_FOUND',
      );
      return;
    }
    comment.deleted = true;
    res.status(204).end();
  });
}
