import { mastodonTextLength } from '@sps/core';
import type { Request, Response, Router } from 'express';
import {
  attachProblem,
  defaultMastodonConfig,
  registerMastodonMedia,
  type TSimMastodonConfig,
  type TSimMastodonMedia,
} from './mastodon-media.sim.js';
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

function renderStatus(req: Request, post: TSimPost, media: Map<string, TSimMastodonMedia>) {
  const origin = `${req.protocol}://${req.get('host')}`;
  return {
    id: post.remoteId,
    created_at: post.at,
    in_reply_to_id: post.replyTo,
    visibility: 'public',
    uri: `${origin}/users/sim/statuses/${post.remoteId}`,
    url: `${origin}/@sim/${post.remoteId}`,
    content: `<p>${post.text}</p>`,
    media_attachments: (post.media as string[]).map((id) => ({ id, type: media.get(id)?.type ?? 'unknown' })),
    account: { id: '1', username: 'sim', acct: 'sim' },
  };
}

export function registerMastodonSim(router: Router, sim: SimState): void {
  router.use(networkMiddleware(sim, 'mastodon', renderMastodonError));

  let config: TSimMastodonConfig = defaultMastodonConfig();
  const media = registerMastodonMedia(
    router,
    requireBearer,
    () => config,
    () => sim.nextNumericId(),
  );

  // https://docs.joinmastodon.org/methods/instance/#v2 (public: no token needed)
  router.get('/api/v2/instance', (req, res) => {
    res.json({
      domain: req.get('host'),
      title: 'Simulated Mastodon',
      version: '4.4.0',
      configuration: {
        statuses: {
          max_characters: config.maxCharacters,
          max_media_attachments: config.maxMediaAttachments,
          characters_reserved_per_url: 23,
        },
        media_attachments: {
          supported_mime_types: config.supportedMimeTypes,
          description_limit: config.descriptionLimit,
          image_size_limit: config.imageSizeLimit,
          image_matrix_limit: 33_177_600,
          video_size_limit: config.videoSizeLimit,
          video_frame_rate_limit: 120,
          video_matrix_limit: 8_294_400,
        },
        polls: {
          max_options: 4,
          max_characters_per_option: 50,
          min_expiration: 300,
          max_expiration: 2_629_746,
        },
      },
    });
  });
  // Simulator control (not Mastodon's): a test sets the instance's own limits, as an admin would.
  router.put('/__sim/instance', (req, res) => {
    config = { ...defaultMastodonConfig(), ...(req.body as Partial<TSimMastodonConfig>) };
    res.status(204).end();
  });

  router.post('/api/v1/statuses', (req, res) => {
    if (!requireBearer(req, res)) return;
    const body = (req.body ?? {}) as { status?: string; in_reply_to_id?: string; media_ids?: string[] };
    const key = typeof req.headers['idempotency-key'] === 'string' ? req.headers['idempotency-key'] : null;
    // Mastodon remembers Idempotency-Key for a while and answers with the status it already created.
    const existing = key ? sim.findByIdempotencyKey('mastodon', key) : undefined;
    if (existing) {
      res.json(renderStatus(req, existing, media));
      return;
    }
    if (!body.status && !body.media_ids?.length) {
      res.status(422).json({ error: "Validation failed: Text can't be blank" });
      return;
    }
    // StatusLengthValidator counts links as 23 and remote mentions by their local part.
    if (mastodonTextLength(body.status ?? '', config.maxCharacters).length > config.maxCharacters) {
      res
        .status(422)
        .json({ error: `Validation failed: Text character limit of ${config.maxCharacters} exceeded` });
      return;
    }
    const mediaIds = Array.isArray(body.media_ids) ? body.media_ids : [];
    const problem = attachProblem(media, mediaIds, config.maxMediaAttachments);
    if (problem) {
      res.status(422).json({ error: problem });
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
      media: mediaIds,
      idempotencyKey: key,
    });
    for (const id of mediaIds) {
      const item = media.get(id);
      if (item) item.attachedTo = post.remoteId;
    }
    answerOrHang(res, () => res.json(renderStatus(req, post, media)));
  });

  router.delete('/api/v1/statuses/:id', (req, res) => {
    if (!requireBearer(req, res)) return;
    const post = sim.getPost('mastodon', req.params.id);
    if (!post || post.deleted) {
      res.status(404).json({ error: 'Record not found' });
      return;
    }
    post.deleted = true;
    res.json({ ...renderStatus(req, post, media), text: post.text });
  });
}
