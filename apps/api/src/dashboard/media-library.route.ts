import { mediaViewB, parseMediaPage } from '@sps/core';
import type { TMediaRepository } from '@sps/db';
import { type RequestHandler, Router } from 'express';
import type { TMediaService } from '../media/media-service.js';

/**
 * `GET /dashboard/api/media`: the Media page's list: the account's items as `GET /v1/media` shows them, each
 * with how many posts use it (`used_by`) and how many of those are pending (`pending_posts`, which make a
 * delete a 409 `media_in_use`), and the plan's storage quota with what is used. Uploads and deletes go
 * through `/dashboard/api/v1/media` (multipart) and `/dashboard/api/v1/media/uploads` (tus), behind the
 * session and its CSRF token like every other dashboard change.
 */
export function mediaLibraryRouter(deps: {
  authenticate: RequestHandler;
  media: TMediaService;
  usage: Pick<TMediaRepository, 'usageCounts'>;
  publicUrl: string;
}): Router {
  const router = Router();
  router.get('/media', deps.authenticate, async (req, res) => {
    const auth = req.auth!;
    const page = parseMediaPage(req.query);
    const [{ items, total }, allowance] = await Promise.all([
      deps.media.list(auth.accountId, page),
      deps.media.allowance(auth.accountId, auth.plan),
    ]);
    const usage = await deps.usage.usageCounts(
      auth.accountId,
      items.map((item) => item.id),
    );
    res.json({
      media: items.map((item) => ({
        ...mediaViewB(deps.publicUrl, item),
        used_by: usage.get(item.id)?.posts ?? 0,
        pending_posts: usage.get(item.id)?.pending ?? 0,
      })),
      total,
      limit: page.limit,
      offset: page.offset,
      quota: {
        used_bytes: allowance.used,
        quota_bytes: allowance.quotaBytes,
        image_bytes: allowance.imageBytes,
        video_bytes: allowance.videoBytes,
      },
    });
  });
  return router;
}
