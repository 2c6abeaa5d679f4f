import type { Router } from 'express';
import { answerOrHang, networkMiddleware, type SimState, type TErrorRenderer } from './sim-state.js';
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
    });
    answerOrHang(res, () => res.status(201).json({ data: { id, text, edit_history_tweet_ids: [id] } }));
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
