import type { Router } from 'express';
import { graphError, requireGraphToken } from './graph-sim.js';
import { count } from './metrics-state.sim.js';
import type { SimState } from './sim-state.js';

const IG_METRICS: Record<string, Parameters<typeof count>[3] | null> = {
  views: 'views',
  reach: null,
  likes: 'likes',
  comments: 'replies',
  shares: 'reposts',
  saved: 'bookmarks',
  total_interactions: null,
};

const notFound = (id: string) =>
  [
    400,
    100,
    `Unsupported get request. Object with ID '${id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation.`,
    { type: 'GraphMethodException', error_subcode: 33 },
  ] as const;

/**
 * Instagram media insights (https://developers.facebook.com/docs/instagram-platform/reference/instagram-media/insights):
 * lifetime values per metric; an unknown metric is code 100; a simulator-issued token without
 * `instagram_business_manage_insights` is code 10 (oauth/scope-guard.sim.ts).
 */
export function registerInstagramMetricsSim(router: Router, sim: SimState): void {
  router.get('/:version/:id/insights', (req, res) => {
    if (!requireGraphToken(req, res)) return;
    const asked = String(req.query.metric ?? '')
      .split(',')
      .filter(Boolean);
    if (asked.length === 0 || asked.some((m) => !(m in IG_METRICS))) {
      graphError(
        res,
        400,
        100,
        `(#100) metric must be one of the following values: ${Object.keys(IG_METRICS).join(', ')}`,
      );
      return;
    }
    const id = req.params.id ?? '';
    const post = sim.getPost('instagram', id);
    if (!post || post.deleted) {
      graphError(res, ...notFound(id));
      return;
    }
    res.json({
      data: asked.map((name) => {
        const field = IG_METRICS[name];
        return {
          name,
          period: 'lifetime',
          values: [{ value: field ? count(sim, 'instagram', id, field) : 0 }],
          id: `${id}/insights/${name}/lifetime`,
        };
      }),
    });
  });
}

/**
 * A Page post read with `fields` (https://developers.facebook.com/docs/graph-api/reference/post/):
 * `shares` (absent when nobody shared), `reactions.summary(total_count)`, `comments.summary(total_count)`.
 * A simulator-issued token without `pages_read_engagement` is code 10 (oauth/scope-guard.sim.ts).
 */
export function registerFacebookMetricsSim(router: Router, sim: SimState): void {
  router.get('/:version/:postId', (req, res, next) => {
    const id = req.params.postId ?? '';
    // Only Page posts (`<page>_<post>`); other objects are not the simulator's to answer here.
    if (!/^[^_]+_\d+$/.test(id)) return next();
    if (!requireGraphToken(req, res)) return;
    const post = sim.getPost('facebook', id);
    if (!post || post.deleted) {
      graphError(res, ...notFound(id));
      return;
    }
    const fields = String(req.query.fields ?? '');
    const shares = count(sim, 'facebook', id, 'reposts');
    res.json({
      id,
      ...(fields.includes('shares') && shares > 0 ? { shares: { count: shares } } : {}),
      ...(fields.includes('reactions')
        ? {
            reactions: {
              data: [],
              summary: { total_count: count(sim, 'facebook', id, 'likes'), viewer_reaction: 'NONE' },
            },
          }
        : {}),
      ...(fields.includes('comments')
        ? {
            comments: {
              data: [],
              summary: {
                order: 'ranked',
                total_count: count(sim, 'facebook', id, 'replies'),
                can_comment: true,
              },
            },
          }
        : {}),
    });
  });
}
