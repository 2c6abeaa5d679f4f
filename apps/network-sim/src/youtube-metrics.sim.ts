import type { Response, Router } from 'express';
import { count } from './metrics-state.sim.js';
import type { SimState } from './sim-state.js';
import { YOUTUBE_SIM_QUOTA_TOKEN } from './youtube.sim.js';

function googleError(res: Response, code: number, reason: string, message: string, status: string): void {
  res
    .status(code)
    .json({ error: { code, message, errors: [{ message, domain: 'youtube', reason }], status } });
}

/**
 * `GET /youtube/v3/videos?part=statistics&id=…` (https://developers.google.com/youtube/v3/docs/videos/list):
 * up to 50 ids; unknown or deleted videos are left out of `items`; counts are strings, as YouTube sends
 * them. A simulator-issued token without a read scope is refused 403 `insufficientPermissions` (oauth/scope-guard.sim.ts).
 */
export function registerYoutubeMetricsSim(router: Router, sim: SimState): void {
  router.get('/youtube/v3/videos', (req, res) => {
    if (req.headers.authorization === `Bearer ${YOUTUBE_SIM_QUOTA_TOKEN}`) {
      googleError(
        res,
        403,
        'quotaExceeded',
        'The request cannot be completed because you have exceeded your quota.',
        'PERMISSION_DENIED',
      );
      return;
    }
    const ids = String(req.query.id ?? '')
      .split(',')
      .filter(Boolean);
    if (ids.length > 50) {
      googleError(
        res,
        400,
        'invalidFilters',
        'The request specifies more than 50 video ids.',
        'INVALID_ARGUMENT',
      );
      return;
    }
    const items = ids.flatMap((id) => {
      const post = sim.getPost('youtube', id);
      if (!post || post.deleted) return [];
      const c = (field: Parameters<typeof count>[3]) => String(count(sim, 'youtube', id, field));
      return [
        {
          kind: 'youtube#video',
          id,
          statistics: {
            viewCount: c('views'),
            likeCount: c('likes'),
            favoriteCount: '0',
            commentCount: c('replies'),
          },
        },
      ];
    });
    res.json({
      kind: 'youtube#videoListResponse',
      items,
      pageInfo: { totalResults: items.length, resultsPerPage: 50 },
    });
  });
}
