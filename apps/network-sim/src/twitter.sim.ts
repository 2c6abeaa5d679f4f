import type { Router } from 'express';
import { numericIdOf, simUserOf } from './oauth/oauth-store.js';
import {
  answerOrHang,
  networkMiddleware,
  type SimState,
  type TErrorRenderer,
  type TSimPost,
} from './sim-state.js';
import {
  invalidRequest,
  mediaIdsProblem,
  registerTwitterMediaRoutes,
  requireBearer,
  type TSimXMediaStore,
} from './twitter-media.sim.js';

/** X API v2 errors are RFC 7807-ish problem documents; rate limits announce the reset as epoch seconds. */
const renderTwitterError: TErrorRenderer = (res, fault) => {
  switch (fault.kind) {
    case 'auth_expired':
      res
        .status(401)
        .json({ title: 'Unauthorized', type: 'about:blank', status: 401, detail: 'Unauthorized' });
      return;
    case 'rate_limited': {
      const reset = Math.floor(Date.now() / 1000) + (fault.retryAfterSeconds ?? 1);
      res
        .status(429)
        .set({
          'x-rate-limit-limit': '100',
          'x-rate-limit-remaining': '0',
          'x-rate-limit-reset': String(reset),
        })
        .json({ title: 'Too Many Requests', detail: 'Too Many Requests', type: 'about:blank', status: 429 });
      return;
    }
    case 'rejected':
      res.status(400).json({
        errors: [{ message: 'The `text` field is invalid.', parameters: {} }],
        title: 'Invalid Request',
        detail: 'One or more parameters to your request was invalid.',
        type: 'https://api.twitter.com/2/problems/invalid-request',
      });
      return;
    default:
      res.status(503).json({
        title: 'Service Unavailable',
        detail: 'Service Unavailable',
        type: 'about:blank',
        status: 503,
      });
  }
};

interface TTweetBody {
  text?: string;
  reply?: { in_reply_to_tweet_id?: string };
  media?: { media_ids?: string[] };
  poll?: { options?: string[]; duration_minutes?: number };
}

export function registerTwitterSim(router: Router, sim: SimState): void {
  router.use(networkMiddleware(sim, 'twitter', renderTwitterError));

  const media: TSimXMediaStore = new Map();
  registerTwitterMediaRoutes(router, sim, media);

  router.post('/2/tweets', (req, res) => {
    if (!requireBearer(req, res)) return;
    const body = (req.body ?? {}) as TTweetBody;
    const text = body.text ?? '';
    const replyTo = body.reply?.in_reply_to_tweet_id ?? null;
    const mediaIds = body.media?.media_ids ?? [];
    const mediaProblem = Array.isArray(mediaIds)
      ? mediaIdsProblem(media, mediaIds)
      : 'Your media IDs are invalid.';
    if (mediaProblem) {
      invalidRequest(res, mediaProblem, { 'media.media_ids': mediaIds });
      return;
    }
    if (replyTo && !sim.getPost('twitter', replyTo)) {
      res.status(400).json({
        errors: [{ message: 'Your Tweet cannot be replied to.', parameters: {} }],
        title: 'Invalid Request',
        detail: 'One or more parameters to your request was invalid.',
        type: 'https://api.twitter.com/2/problems/invalid-request',
      });
      return;
    }
    const id = sim.nextNumericId();
    sim.addPost({
      platform: 'twitter',
      remoteId: id,
      text,
      replyTo,
      media: { media_ids: mediaIds, poll: body.poll ?? null },
      idempotencyKey: null,
      author: numericIdOf(simUserOf(sim, 'twitter', req), 19),
    });
    answerOrHang(res, () => res.status(201).json({ data: { id, text, edit_history_tweet_ids: [id] } }));
  });

  /**
   * The user Post timeline, newest first: `start_time` (RFC 3339, inclusive), `max_results` 5-100 (10 by
   * default), `pagination_token` from `meta.next_token`, `tweet.fields` choosing the extra fields.
   * https://docs.x.com/x-api/posts/timelines/introduction
   */
  router.get('/2/users/:id/tweets', (req, res) => {
    if (!requireBearer(req, res)) return;
    const max = req.query.max_results === undefined ? 10 : Number(req.query.max_results);
    if (!Number.isInteger(max) || max < 5 || max > 100) {
      invalidRequest(
        res,
        `The \`max_results\` query parameter value [${String(req.query.max_results)}] is not between 5 and 100`,
        { max_results: [String(req.query.max_results)] },
      );
      return;
    }
    const start = typeof req.query.start_time === 'string' ? Date.parse(req.query.start_time) : undefined;
    if (start !== undefined && Number.isNaN(start)) {
      invalidRequest(res, 'Invalid start_time', { start_time: [String(req.query.start_time)] });
      return;
    }
    const offset = typeof req.query.pagination_token === 'string' ? Number(req.query.pagination_token) : 0;
    const fields = new Set(String(req.query['tweet.fields'] ?? '').split(','));
    const all = sim.timelineOf('twitter', req.params.id, start);
    const page = all.slice(offset, offset + max);
    const shape = (p: TSimPost) => {
      const mediaIds = (p.media as { media_ids?: string[] } | null)?.media_ids ?? [];
      return {
        id: p.remoteId,
        text: p.text,
        edit_history_tweet_ids: [p.remoteId],
        ...(fields.has('created_at') ? { created_at: p.at } : {}),
        ...(fields.has('referenced_tweets') && p.replyTo
          ? { referenced_tweets: [{ type: 'replied_to', id: p.replyTo }] }
          : {}),
        ...(fields.has('attachments') && mediaIds.length > 0
          ? { attachments: { media_keys: mediaIds.map((m) => `3_${m}`) } }
          : {}),
      };
    };
    const more = offset + max < all.length;
    res.json({
      ...(page.length > 0 ? { data: page.map(shape) } : {}),
      meta: {
        result_count: page.length,
        ...(page.length > 0 ? { newest_id: page[0]?.remoteId, oldest_id: page.at(-1)?.remoteId } : {}),
        ...(more ? { next_token: String(offset + max) } : {}),
      },
    });
  });

  router.delete('/2/tweets/:id', (req, res) => {
    if (!requireBearer(req, res)) return;
    const post = sim.getPost('twitter', req.params.id);
    if (!post || post.deleted) {
      res.status(404).json({
        title: 'Not Found Error',
        detail: 'Could not find tweet.',
        type: 'about:blank',
        status: 404,
      });
      return;
    }
    post.deleted = true;
    res.json({ data: { deleted: true } });
  });
}
