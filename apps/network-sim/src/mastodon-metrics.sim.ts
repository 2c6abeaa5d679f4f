import type { Request, Response, Router } from 'express';
import { count, listParam } from './metrics-state.sim.js';
import type { SimState, TSimPost } from './sim-state.js';

/** Statuses one multiple-status read takes in this simulator (see mastodon-metrics.ts in packages/networks). */
const MAX_IDS = 20;

function refusedScope(req: Request, res: Response): boolean {
  if (!req.headers.authorization?.startsWith('Bearer ')) {
    res.status(401).json({ error: 'The access token is invalid' });
    return true;
  }
  // A token containing "noread" stands for a connection made without `read:statuses` (as mastodon.sim.ts).
  if (req.headers.authorization.includes('noread')) {
    res.status(403).json({ error: 'This action is outside the authorized scopes' });
    return true;
  }
  return false;
}

function status(sim: SimState, post: TSimPost) {
  const c = (field: Parameters<typeof count>[3]) => count(sim, 'mastodon', post.remoteId, field);
  return {
    id: post.remoteId,
    created_at: post.at,
    in_reply_to_id: post.replyTo,
    visibility: 'public',
    content: `<p>${post.text}</p>`,
    replies_count: c('replies'),
    reblogs_count: c('reposts'),
    favourites_count: c('likes'),
    quotes_count: c('quotes'),
  };
}

/**
 * `GET /api/v1/statuses?id[]=` ("View multiple statuses", 4.3+: fewer records than asked when some do
 * not exist) and `GET /api/v1/statuses/:id` (404 `Record not found`).
 * https://docs.joinmastodon.org/methods/statuses/#index, https://docs.joinmastodon.org/methods/statuses/#get
 */
export function registerMastodonMetricsSim(router: Router, sim: SimState): void {
  router.get('/api/v1/statuses', (req, res) => {
    if (refusedScope(req, res)) return;
    const ids = [...new Set([...listParam(req.query['id[]']), ...listParam(req.query.id)])];
    if (ids.length > MAX_IDS) {
      res.status(422).json({ error: `Validation failed: at most ${MAX_IDS} statuses` });
      return;
    }
    const found = ids
      .map((id) => sim.getPost('mastodon', id))
      .filter((p): p is TSimPost => !!p && !p.deleted);
    res.json(found.map((p) => status(sim, p)));
  });

  router.get('/api/v1/statuses/:id', (req, res) => {
    if (refusedScope(req, res)) return;
    const post = sim.getPost('mastodon', req.params.id);
    if (!post || post.deleted) {
      res.status(404).json({ error: 'Record not found' });
      return;
    }
    res.json(status(sim, post));
  });
}
