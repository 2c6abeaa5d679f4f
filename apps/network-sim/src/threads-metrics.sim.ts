import type { Router } from 'express';
import { graphError, graphObjectMissing, requireGraphToken } from './graph-sim.js';
import { count } from './metrics-state.sim.js';
import type { SimState } from './sim-state.js';

const METRICS = new Set(['views', 'likes', 'replies', 'reposts', 'quotes', 'shares']);

/**
 * `GET /{version}/{threads-media-id}/insights?metric=…` (https://developers.facebook.com/documentation/threads/insights):
 * lifetime values per metric; an unknown metric is code 100; a deleted post is code 100 subcode 33; a
 * simulator-issued token without `threads_manage_insights` is code 10 (permission), as Graph answers
 * (checked ahead of it, oauth/scope-guard.sim.ts).
 */
export function registerThreadsMetricsSim(router: Router, sim: SimState): void {
  router.get('/:version/:id/insights', (req, res) => {
    if (!requireGraphToken(req, res)) return;
    const asked = String(req.query.metric ?? '')
      .split(',')
      .filter(Boolean);
    const unknown = asked.find((m) => !METRICS.has(m));
    if (asked.length === 0 || unknown) {
      graphError(
        res,
        400,
        100,
        `(#100) metric[${asked.indexOf(unknown ?? '')}] must be one of the following values: views, likes, replies, reposts, quotes, shares`,
      );
      return;
    }
    const post = sim.getPost('threads', req.params.id);
    if (!post || post.deleted) {
      graphObjectMissing(res);
      return;
    }
    const field = {
      views: 'views',
      likes: 'likes',
      replies: 'replies',
      reposts: 'reposts',
      quotes: 'quotes',
      shares: null,
    } as const;
    res.json({
      data: asked.map((name) => {
        const f = field[name as keyof typeof field];
        return {
          name,
          period: 'lifetime',
          values: [{ value: f ? count(sim, 'threads', post.remoteId, f) : 0 }],
          title: name,
          id: `${post.remoteId}/insights/${name}/lifetime`,
        };
      }),
    });
  });
}
