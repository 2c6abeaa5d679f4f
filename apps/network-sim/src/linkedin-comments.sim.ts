import type { Request, Response, Router } from 'express';
import type { SimState } from './sim-state.js';

type TErr = (res: Response, status: number, code: string, message: string, serviceErrorCode?: number) => void;

/**
 * Get Comments on Shares: `GET /rest/socialActions/{share or ugcPost URN}/comments` with `start` and `count`
 * (10 by default, at most 100), oldest first, each element with `id`, `$URN`, `actor`, `object`,
 * `message.text` and `created`/`lastModified` `{actor, time}`, and `paging {start, count, total}`. An unknown
 * or deleted post is 404. The read scope is checked by the scope guard (r_organization_social or
 * r_member_social). https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/comments-api
 */
export function registerLinkedInComments(
  router: Router,
  sim: SimState,
  requireHeaders: (req: Request, res: Response) => boolean,
  err: TErr,
): void {
  router.get('/rest/socialActions/:target/comments', (req, res) => {
    if (!requireHeaders(req, res)) return;
    const target = req.params.target ?? '';
    const parent = sim.getPost('linkedin', target);
    if (!parent || parent.deleted) {
      err(res, 404, 'NOT_FOUND', `Not Found: ${target}`);
      return;
    }
    const start = Math.max(0, Number(req.query.start ?? 0) || 0);
    const count = Math.min(100, Math.max(1, Number(req.query.count ?? 10) || 10));
    const comments = sim.postsOf('linkedin').filter((p) => p.replyTo === target && !p.deleted);
    // The simulator's comments are made by the account that made the post (the service comments its own).
    const actor = parent.author ?? '';
    res.json({
      paging: { start, count, total: comments.length, links: [] },
      elements: comments.slice(start, start + count).map((p) => {
        const at = { actor, time: Date.parse(p.at) };
        return {
          id: /,(\d+)\)$/.exec(p.remoteId)?.[1] ?? p.remoteId,
          $URN: p.remoteId,
          actor,
          object: target,
          message: { text: p.text },
          created: at,
          lastModified: at,
        };
      }),
    });
  });
}
