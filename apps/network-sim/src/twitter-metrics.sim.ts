import type { Router } from 'express';
import { count } from './metrics-state.sim.js';
import { numericIdOf, simUserOf } from './oauth/oauth-store.js';
import type { SimState } from './sim-state.js';
import { requireBearer } from './twitter-media.sim.js';

const NON_PUBLIC_DAYS = 30;

/**
 * `GET /2/tweets?ids=` (https://docs.x.com/x-api/posts/lookup): 1 to 100 ids; `tweet.fields` picks
 * `public_metrics` and `non_public_metrics`, the latter only for the token owner's posts of the last 30 days
 * (https://developer.x.com/en/docs/twitter-api/metrics). Unknown or deleted ids come back in `errors`
 * beside the found ones. Scopes are checked ahead of it (oauth/scope-guard.sim.ts).
 */
export function registerTwitterMetricsSim(router: Router, sim: SimState): void {
  router.get('/2/tweets', (req, res) => {
    if (!requireBearer(req, res)) return;
    const raw = typeof req.query.ids === 'string' ? req.query.ids : '';
    const ids = raw.split(',').filter(Boolean);
    if (ids.length < 1 || ids.length > 100 || !ids.every((id) => /^\d{1,19}$/.test(id))) {
      res.status(400).json({
        errors: [
          {
            parameters: { ids: [raw] },
            message: `The number of values in the \`ids\` query parameter list [${ids.length}] is not between 1 and 100`,
          },
        ],
        title: 'Invalid Request',
        detail: 'One or more parameters to your request was invalid.',
        type: 'https://api.twitter.com/2/problems/invalid-request',
      });
      return;
    }
    const fields = String(req.query['tweet.fields'] ?? '').split(',');
    const user = numericIdOf(simUserOf(sim, 'twitter', req), 19);
    const data: unknown[] = [];
    const errors: unknown[] = [];
    for (const id of ids) {
      const post = sim.getPost('twitter', id);
      if (!post || post.deleted) {
        errors.push({
          value: id,
          detail: `Could not find tweet with ids: [${id}].`,
          title: 'Not Found Error',
          resource_type: 'tweet',
          parameter: 'ids',
          resource_id: id,
          type: 'https://api.twitter.com/2/problems/resource-not-found',
        });
        continue;
      }
      const c = (field: Parameters<typeof count>[3]) => count(sim, 'twitter', id, field);
      const tweet: Record<string, unknown> = { id, text: post.text, edit_history_tweet_ids: [id] };
      if (fields.includes('public_metrics')) {
        tweet.public_metrics = {
          retweet_count: c('reposts'),
          reply_count: c('replies'),
          like_count: c('likes'),
          quote_count: c('quotes'),
          bookmark_count: c('bookmarks'),
          impression_count: c('impressions'),
        };
      }
      if (fields.includes('non_public_metrics')) {
        const recent = Date.now() - Date.parse(post.at) < NON_PUBLIC_DAYS * 86_400_000;
        if (!recent || (post.author && post.author !== user)) {
          errors.push({
            value: id,
            detail: 'Sorry, you are not authorized to access non_public_metrics on this Tweet.',
            title: 'Authorization Error',
            resource_type: 'tweet',
            field: 'non_public_metrics',
            resource_id: id,
            type: 'https://api.twitter.com/2/problems/not-authorized-for-field',
          });
        } else {
          tweet.non_public_metrics = {
            impression_count: c('impressions'),
            url_link_clicks: c('clicks'),
            user_profile_clicks: 0,
          };
        }
      }
      data.push(tweet);
    }
    res.json({ ...(data.length > 0 ? { data } : {}), ...(errors.length > 0 ? { errors } : {}) });
  });
}
