import type { Request, Response, Router } from 'express';
import { count } from './metrics-state.sim.js';
import type { SimState } from './sim-state.js';

function linkedInError(res: Response, status: number, code: string, message: string) {
  res.status(status).json({ status, serviceErrorCode: 100, code, message });
}

/** `List(a,b)` of Rest.li 2.0, its items URL-encoded. */
function restliList(value: unknown): string[] | null {
  if (value === undefined) return [];
  const match = typeof value === 'string' ? /^List\((.*)\)$/.exec(value) : null;
  if (!match) return null;
  return (match[1] ?? '')
    .split(',')
    .filter(Boolean)
    .map((item) => decodeURIComponent(item));
}

const headersMissing = (req: Request) =>
  !req.headers['linkedin-version'] || req.headers['x-restli-protocol-version'] !== '2.0.0';

/**
 * Lifetime organization share statistics
 * (https://learn.microsoft.com/en-us/linkedin/marketing/community-management/organizations/share-statistics):
 * one element per share or ugcPost the organization authored (others are left out). A simulator-issued
 * token without `rw_organization_admin` is refused 403 ACCESS_DENIED ahead of it (oauth/scope-guard.sim.ts).
 */
export function registerLinkedInMetricsSim(router: Router, sim: SimState): void {
  router.get('/rest/organizationalEntityShareStatistics', (req, res) => {
    if (!req.headers.authorization?.startsWith('Bearer ')) {
      linkedInError(res, 401, 'INVALID_ACCESS_TOKEN', 'Empty oauth2 access token');
      return;
    }
    if (headersMissing(req)) {
      linkedInError(
        res,
        400,
        'VERSION_MISSING',
        'A version must be present. Please specify a version by adding the LinkedIn-Version header.',
      );
      return;
    }
    const org = String(req.query.organizationalEntity ?? '');
    const shares = restliList(req.query.shares);
    const ugcPosts = restliList(req.query.ugcPosts);
    if (
      req.query.q !== 'organizationalEntity' ||
      !org.startsWith('urn:li:organization:') ||
      !shares ||
      !ugcPosts
    ) {
      linkedInError(res, 400, 'ILLEGAL_ARGUMENT', 'Invalid query parameters passed to request');
      return;
    }
    const element = (key: 'share' | 'ugcPost', urn: string) => {
      const post = sim.getPost('linkedin', urn);
      if (!post || post.deleted || post.author !== org) return [];
      const c = (f: Parameters<typeof count>[3]) => count(sim, 'linkedin', urn, f);
      return [
        {
          [key]: urn,
          organizationalEntity: org,
          totalShareStatistics: {
            uniqueImpressionsCount: c('impressions'),
            shareCount: c('reposts'),
            engagement: 0,
            clickCount: c('clicks'),
            likeCount: c('likes'),
            impressionCount: c('impressions'),
            commentCount: c('replies'),
          },
        },
      ];
    };
    res.json({
      paging: { count: 10, start: 0, links: [] },
      elements: [
        ...shares.flatMap((u) => element('share', u)),
        ...ugcPosts.flatMap((u) => element('ugcPost', u)),
      ],
    });
  });
}
