import type { Request, Response, Router } from 'express';
import { findLinks } from './links.sim.js';
import {
  attachProblem,
  defaultMastodonConfig,
  registerMastodonMedia,
  type TSimMastodonConfig,
  type TSimMastodonMedia,
} from './mastodon-media.sim.js';
import { numericIdOf, simUserOf } from './oauth/oauth-store.js';
import {
  answerOrHang,
  networkMiddleware,
  type SimState,
  type TErrorRenderer,
  type TSimPost,
} from './sim-state.js';
import { mastodonTextLength } from './text-limits.sim.js';

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

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );

/** A link as Mastodon renders it: the scheme and the tail past 30 characters hidden, but still text. */
function renderLink(url: string): string {
  const scheme = /^[a-z][a-z0-9+.-]*:\/\/(www\.)?/i.exec(url)?.[0] ?? '';
  const rest = url.slice(scheme.length);
  const shown = rest.slice(0, 30);
  const hidden = rest.slice(30);
  return (
    `<a href="${escapeHtml(url)}" target="_blank" rel="nofollow noopener" translate="no">` +
    `<span class="invisible">${escapeHtml(scheme)}</span>` +
    `<span class="${hidden ? 'ellipsis' : ''}">${escapeHtml(shown)}</span>` +
    `<span class="invisible">${escapeHtml(hidden)}</span></a>`
  );
}

/**
 * Mastodon returns a status's text only as HTML: escaped, links (with a scheme) as anchors, paragraphs on
 * blank lines and `<br />` for line breaks. https://docs.joinmastodon.org/spec/activitypub/#sanitization
 */
export function statusHtml(text: string): string {
  return text
    .split(/\n{2,}/)
    .map((paragraph) => {
      let out = '';
      let cursor = 0;
      for (const link of findLinks(paragraph).filter((l) => l.typed === l.target)) {
        out += escapeHtml(paragraph.slice(cursor, link.start)) + renderLink(link.target);
        cursor = link.end;
      }
      out += escapeHtml(paragraph.slice(cursor));
      return `<p>${out.replace(/\n/g, '<br />')}</p>`;
    })
    .join('');
}

function renderStatus(req: Request, post: TSimPost, media: Map<string, TSimMastodonMedia>) {
  // Instances serve (and link) over https whatever the hop behind their proxy is; so does the simulator,
  // though it listens on plain http.
  const origin = `https://${req.get('host')}`;
  return {
    id: post.remoteId,
    created_at: post.at,
    in_reply_to_id: post.replyTo,
    visibility: 'public',
    uri: `${origin}/users/sim/statuses/${post.remoteId}`,
    url: `${origin}/@sim/${post.remoteId}`,
    content: statusHtml(post.text),
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
    (name, bytes) => sim.recordUpload('mastodon', name, bytes),
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
    if (typeof body.status === 'string' && mastodonTextLength(body.status) > config.maxCharacters) {
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
      author: numericIdOf(simUserOf(sim, 'mastodon', req), 18),
    });
    for (const id of mediaIds) {
      const item = media.get(id);
      if (item) item.attachedTo = post.remoteId;
    }
    answerOrHang(res, () => res.json(renderStatus(req, post, media)));
  });

  /**
   * An account's statuses, newest first: `limit` (20 by default, at most 40), `max_id`/`since_id`/`min_id`,
   * `exclude_replies`, `exclude_reblogs`; a `Link` header pages on. Public statuses need no token; a token
   * without `read:statuses` is refused (a token containing "noread" stands for a connection made before
   * the service asked for it). https://docs.joinmastodon.org/methods/accounts/#statuses
   */
  router.get('/api/v1/accounts/:id/statuses', (req, res) => {
    if (req.headers.authorization?.includes('noread')) {
      res.status(403).json({ error: 'This action is outside the authorized scopes' });
      return;
    }
    const author = req.params.id;
    if (!/^\d+$/.test(author)) {
      res.status(404).json({ error: 'Record not found' });
      return;
    }
    const limit = Math.min(40, Math.max(1, Number(req.query.limit ?? 20) || 20));
    const id = (name: string) =>
      typeof req.query[name] === 'string' ? BigInt(`0${req.query[name]}`) : undefined;
    const [maxId, sinceId, minId] = [id('max_id'), id('since_id'), id('min_id')];
    const noReplies = req.query.exclude_replies === 'true';
    let list = sim
      .timelineOf('mastodon', author)
      .filter((p) => !(noReplies && p.replyTo))
      .filter((p) => maxId === undefined || BigInt(p.remoteId) < maxId)
      .filter((p) => sinceId === undefined || BigInt(p.remoteId) > sinceId);
    // min_id gives the statuses right after it (the oldest first among the newer ones).
    if (minId !== undefined) list = list.filter((p) => BigInt(p.remoteId) > minId).slice(-limit);
    const page = list.slice(0, limit);
    const origin = `${req.protocol}://${req.get('host')}`;
    const base = `${origin}${req.baseUrl}/api/v1/accounts/${author}/statuses?limit=${limit}`;
    const oldest = page.at(-1);
    const newest = page[0];
    if (oldest && newest) {
      res.set(
        'link',
        `<${base}&max_id=${oldest.remoteId}>; rel="next", <${base}&min_id=${newest.remoteId}>; rel="prev"`,
      );
    }
    res.json(page.map((p) => renderStatus(req, p, media)));
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
