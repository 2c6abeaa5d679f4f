import type { Router } from 'express';
import { requireSession } from './bluesky-auth.sim.js';
import { count, listParam } from './metrics-state.sim.js';
import type { SimState } from './sim-state.js';

/**
 * `app.bsky.feed.getPosts` (https://docs.bsky.app/docs/api/app-bsky-feed-get-posts): `uris` at most 25
 * (lexicon `maxLength: 25`; more is 400 InvalidRequest), answered with the post views the AppView has;
 * a deleted or unknown post is left out. Needs an access session, as through a PDS.
 */
export function registerBlueskyMetricsSim(router: Router, sim: SimState): void {
  router.get('/xrpc/app.bsky.feed.getPosts', async (req, res) => {
    const session = await requireSession(sim, req, res);
    if (!session) return;
    const uris = listParam(req.query.uris);
    if (uris.length === 0 || uris.length > 25) {
      res.status(400).json({
        error: 'InvalidRequest',
        message:
          uris.length === 0
            ? 'Error: Params must have the property "uris"'
            : 'Error: uris must not have more than 25 elements',
      });
      return;
    }
    const posts = uris.flatMap((uri) => {
      const post = sim.getPost('bluesky', uri);
      if (!post || post.deleted) return [];
      const c = (field: Parameters<typeof count>[3]) => count(sim, 'bluesky', uri, field);
      return [
        {
          uri,
          cid: `bafy${uri.split('/').pop()}`,
          author: { did: uri.split('/')[2], handle: session.handle },
          record: { $type: 'app.bsky.feed.post', text: post.text, createdAt: post.at },
          replyCount: c('replies'),
          repostCount: c('reposts'),
          likeCount: c('likes'),
          quoteCount: c('quotes'),
          indexedAt: post.at,
        },
      ];
    });
    res.json({ posts });
  });
}
