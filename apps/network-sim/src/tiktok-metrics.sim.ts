import type { Response, Router } from 'express';
import { count } from './metrics-state.sim.js';
import type { SimState } from './sim-state.js';

const FIELDS = new Set([
  'id',
  'create_time',
  'title',
  'like_count',
  'comment_count',
  'share_count',
  'view_count',
]);

function tiktokError(res: Response, status: number, code: string, message: string): void {
  res.status(status).json({ data: {}, error: { code, message, log_id: 'sim-log-id' } });
}

/**
 * `POST /v2/video/query/` (https://developers.tiktok.com/doc/tiktok-api-v2-video-query): `fields` in the
 * query, `filters.video_ids` (1 to 20) in the body; only videos TikTok holds are returned. A token this
 * simulator issued without `video.list` gets `scope_not_authorized` (401) from oauth/scope-guard.sim.ts. Mounted after tiktok.sim.ts's
 * bearer check, so a request without a token is refused as there.
 */
export function registerTiktokMetricsSim(router: Router, sim: SimState): void {
  router.post('/v2/video/query', (req, res) => {
    const fields = String(req.query.fields ?? '')
      .split(',')
      .filter(Boolean);
    if (fields.length === 0 || fields.some((f) => !FIELDS.has(f))) {
      tiktokError(res, 400, 'invalid_params', 'fields is invalid');
      return;
    }
    const ids = (req.body as { filters?: { video_ids?: unknown } } | undefined)?.filters?.video_ids;
    if (!Array.isArray(ids) || ids.length === 0 || ids.length > 20) {
      tiktokError(res, 400, 'invalid_params', 'The number of video ids should be between 1 and 20.');
      return;
    }
    const videos = ids.flatMap((id) => {
      const post = sim.getPost('tiktok', String(id));
      if (!post || post.deleted) return [];
      const c = (f: Parameters<typeof count>[3]) => count(sim, 'tiktok', String(id), f);
      const all: Record<string, unknown> = {
        id: String(id),
        create_time: Math.floor(Date.parse(post.at) / 1000),
        title: post.text,
        like_count: c('likes'),
        comment_count: c('replies'),
        share_count: c('reposts'),
        view_count: c('views'),
      };
      return [Object.fromEntries(fields.map((f) => [f, all[f]]))];
    });
    res.json({
      data: { videos, cursor: 0, has_more: false },
      error: { code: 'ok', message: '', log_id: 'sim-log-id' },
    });
  });
}
