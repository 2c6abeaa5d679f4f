import type { Router } from 'express';
import { graphError, requireGraphToken } from './graph-sim.js';
import { answerOrHang, networkMiddleware, type SimState, type TErrorRenderer } from './sim-state.js';

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
  is_carousel_item?: boolean;
}

export function registerThreadsSim(router: Router, sim: SimState): void {
  const containers = new Map<string, TContainer>();
  const permalinks = new Map<string, string>();
  router.use(networkMiddleware(sim, 'threads', renderThreadsError));

  router.post('/:userId/threads', (req, res) => {
    if (!requireGraphToken(req, res)) return;
    const body = {
      ...(req.query as Record<string, unknown>),
      ...((req.body ?? {}) as Record<string, unknown>),
    } as TContainer;
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
    if (body.reply_to_id && !sim.getPost('threads', body.reply_to_id)) {
      graphError(res, 400, 100, 'Invalid parameter', {
        error_user_msg: 'The post to reply to does not exist.',
      });
      return;
    }
    const id = sim.nextNumericId();
    containers.set(id, body);
    res.json({ id });
  });

  router.post('/:userId/threads_publish', (req, res) => {
    if (!requireGraphToken(req, res)) return;
    const creationId = String(
      req.query.creation_id ?? (req.body as { creation_id?: string } | undefined)?.creation_id ?? '',
    );
    const container = containers.get(creationId);
    if (!container || container.is_carousel_item) {
      graphError(res, 400, 24, 'The requested resource does not exist', { error_subcode: 4279009 });
      return;
    }
    containers.delete(creationId);
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
        children: container.children,
      },
      idempotencyKey: null,
    });
    answerOrHang(res, () => res.json({ id }));
  });

  router.get('/:id', (req, res) => {
    if (!requireGraphToken(req, res)) return;
    const post = sim.getPost('threads', req.params.id);
    if (!post || post.deleted) {
      graphError(
        res,
        400,
        100,
        'Object does not exist, cannot be loaded due to missing permissions, or does not support this operation',
        { error_subcode: 33 },
      );
      return;
    }
    res.json({ id: post.remoteId, permalink: permalinks.get(post.remoteId) });
  });

  router.delete('/:id', (req, res) => {
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
