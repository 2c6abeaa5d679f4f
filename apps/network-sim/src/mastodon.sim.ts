import type { Request, Response, Router } from 'express';
import {
  answerOrHang,
  networkMiddleware,
  type SimState,
  type TErrorRenderer,
  type TSimPost,
} from './sim-state.js';

/** Mastodon answers errors as `{ error }`; rate limits carry `X-RateLimit-Reset` as an ISO timestamp. */
const renderMastodonError: TErrorRenderer = (res, fault) => {
  switch (fault.kind) {
    case 'auth_expired':
      res.status(401).json({ error: 'The access token is invalid' });
      return;
    case 'rate_limited': {
      const reset = new Date(Date.now() + (fault.retryAfterSeconds ?? 1) * 1000).toISOString();
      res
        .status(429)
        .set({ 'x-ratelimit-limit': '300', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': reset })
        .json({ error: 'Too many requests' });
      return;
    }
    case 'rejected':
      res.status(422).json({ error: "Validation failed: Text can't be blank" });
      return;
    default:
      res.status(503).json({ error: 'Service Unavailable' });
  }
};

function requireBearer(req: Request, res: Response): boolean {
  if (req.headers.authorization?.startsWith('Bearer ')) return true;
  res.status(401).json({ error: 'The access token is invalid' });
  return false;
}

function renderStatus(req: Request, post: TSimPost) {
  const origin = `${req.protocol}://${req.get('host')}`;
  return {
    id: post.remoteId,
    created_at: post.at,
    in_reply_to_id: post.replyTo,
    visibility: 'public',
    uri: `${origin}/users/sim/statuses/${post.remoteId}`,
    url: `${origin}/@sim/${post.remoteId}`,
    content: `<p>${post.text}</p>`,
    media_attachments: (post.media as string[]).map((id) => ({ id, type: 'image' })),
    account: { id: '1', username: 'sim', acct: 'sim' },
  };
}

export function registerMastodonSim(router: Router, sim: SimState): void {
  router.use(networkMiddleware(sim, 'mastodon', renderMastodonError));

  router.post('/api/v2/media', (req, res) => {
    if (!requireBearer(req, res)) return;
    const raw = Buffer.isBuffer(req.body) ? req.body.toString('latin1') : '';
    if (!req.is('multipart/form-data') || !raw.includes('name="file"')) {
      res.status(422).json({ error: 'Validation failed: File content type is invalid' });
      return;
    }
    const id = sim.nextNumericId();
    const description = /name="description"\r\n\r\n([^\r]*)/.exec(raw)?.[1] ?? null;
    res.json({ id, type: 'image', url: `https://files.sim/${id}.png`, preview_url: null, description });
  });

  router.post('/api/v1/statuses', (req, res) => {
    if (!requireBearer(req, res)) return;
    const body = (req.body ?? {}) as { status?: string; in_reply_to_id?: string; media_ids?: string[] };
    const key = typeof req.headers['idempotency-key'] === 'string' ? req.headers['idempotency-key'] : null;
    // Mastodon remembers Idempotency-Key for a while and answers with the status it already created.
    const existing = key ? sim.findByIdempotencyKey('mastodon', key) : undefined;
    if (existing) {
      res.json(renderStatus(req, existing));
      return;
    }
    if (!body.status && !body.media_ids?.length) {
      res.status(422).json({ error: "Validation failed: Text can't be blank" });
      return;
    }
    const replyTo = body.in_reply_to_id ?? null;
    if (replyTo && !sim.getPost('mastodon', replyTo)) {
      res.status(404).json({ error: 'Record not found' });
      return;
    }
    const post = sim.addPost({
      platform: 'mastodon',
      remoteId: sim.nextNumericId(),
      text: body.status ?? '',
      replyTo,
      media: body.media_ids ?? [],
      idempotencyKey: key,
    });
    answerOrHang(res, () => res.json(renderStatus(req, post)));
  });

  router.delete('/api/v1/statuses/:id', (req, res) => {
    if (!requireBearer(req, res)) return;
    const post = sim.getPost('mastodon', req.params.id);
    if (!post || post.deleted) {
      res.status(404).json({ error: 'Record not found' });
      return;
    }
    post.deleted = true;
    res.json({ ...renderStatus(req, post), text: post.text });
  });
}
