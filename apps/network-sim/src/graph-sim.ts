import type { TPlatform } from '@sps/core';
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { numericIdOf, simUserOf } from './oauth/oauth-store.js';
import type { SimState } from './sim-state.js';

// What Meta's Graph APIs (Facebook, Instagram, Threads) answer on errors, shared by their simulators.

/** `{ error: { message, type, code, fbtrace_id, ... } }`; `extra` adds fields or replaces `type`. */
export function graphError(
  res: Response,
  status: number,
  code: number,
  message: string,
  extra: Record<string, unknown> = {},
): void {
  res
    .status(status)
    .json({ error: { message, type: 'OAuthException', code, ...extra, fbtrace_id: 'AsimTrace01' } });
}

/** Graph's answer for an object that is gone or was never there (code 100, subcode 33). */
export function graphObjectMissing(res: Response): void {
  graphError(
    res,
    400,
    100,
    'Object does not exist, cannot be loaded due to missing permissions, or does not support this operation',
    { error_subcode: 33 },
  );
}

/** A bearer header (or Meta's `OAuth` form) or an `access_token` query parameter; otherwise Graph's 401 (code 2500). */
export function requireGraphToken(req: Request, res: Response): boolean {
  const header = req.headers.authorization;
  if (
    header?.startsWith('Bearer ') ||
    header?.startsWith('OAuth ') ||
    typeof req.query.access_token === 'string'
  )
    return true;
  graphError(
    res,
    401,
    2500,
    'An active access token must be used to query information about the current user.',
  );
  return false;
}

/**
 * Graph API versions and the day each stops being served (null: not announced yet).
 * https://developers.facebook.com/docs/graph-api/changelog/versions/
 */
const GRAPH_VERSIONS: Record<string, string | null> = {
  'v26.0': null,
  'v25.0': '2028-07-29',
  'v24.0': '2028-02-18',
  'v23.0': '2027-10-08',
  'v22.0': '2027-05-20',
  'v21.0': '2027-01-21',
  'v20.0': '2026-09-24',
  'v19.0': '2026-05-21',
  'v18.0': '2026-01-26',
  'v17.0': '2025-09-12',
};
export const GRAPH_LATEST_VERSION = 'v26.0';

export function graphVersionAvailable(version: string, now: Date = new Date()): boolean {
  if (!Object.hasOwn(GRAPH_VERSIONS, version)) return false;
  const until = GRAPH_VERSIONS[version];
  return until === null || until === undefined || now.getTime() < Date.parse(`${until}T00:00:00Z`);
}

/**
 * Mounts a network's Graph routes under `/:version`, refusing versions the network does not serve.
 * Modeled: an expired Graph version is answered like the Marketing API's, code 2635 "You are calling a
 * deprecated version…" (Graph itself has at times forwarded such calls to the oldest live version; a
 * connector must not rely on either, so the simulator refuses).
 */
export function versionedGraphRouter(
  router: Router,
  isAvailable: (version: string) => boolean,
  latest: string,
): Router {
  const api = express.Router({ mergeParams: true });
  router.use(
    '/:version',
    (req: Request, res: Response, next: NextFunction) => {
      const version = String(req.params.version ?? '');
      if (isAvailable(version)) return next();
      graphError(
        res,
        400,
        2635,
        `(#2635) You are calling a deprecated version of the Graph API (${version}). Please update to the latest version: ${latest}.`,
      );
    },
    api,
  );
  return api;
}

/** A publish of a container that is not FINISHED yet, in each network's own words. */
export const GRAPH_NOT_READY = {
  instagram: {
    status: 400,
    code: 9007,
    message: 'Media ID is not available',
    extra: {
      error_subcode: 2207027,
      is_transient: false,
      error_user_title: 'Media ID is not available',
      error_user_msg: 'The media is not ready for publishing, please wait for a moment',
    },
  },
  threads: {
    status: 400,
    code: 24,
    message: 'The requested resource does not exist',
    extra: {
      error_subcode: 4279009,
      is_transient: false,
      error_user_title: 'Media Not Found',
      error_user_msg: 'The media with the given id cannot be found.',
    },
  },
} as const;

/**
 * A Graph list edge (`/{user}/threads`, `/{ig-user}/media`, `/{page}/published_posts`): newest first,
 * `since`/`until` (Unix seconds) on the creation time, `limit` (25 by default, at most 100) and cursor
 * paging (`paging.cursors.after`, `paging.next` while more remain).
 * https://developers.facebook.com/docs/graph-api/results
 */
export function graphList<T extends { at: string }>(
  req: Request,
  res: Response,
  items: T[],
  shape: (item: T, fields: Set<string>) => Record<string, unknown>,
): void {
  const seconds = (raw: unknown) => {
    if (typeof raw !== 'string' || raw === '') return undefined;
    const n = Number(raw);
    return Number.isFinite(n) ? n * 1000 : Date.parse(raw);
  };
  const since = seconds(req.query.since);
  const until = seconds(req.query.until);
  if ((since !== undefined && Number.isNaN(since)) || (until !== undefined && Number.isNaN(until))) {
    graphError(
      res,
      400,
      100,
      '(#100) The since and until parameters must be Unix timestamps or strtotime values',
    );
    return;
  }
  const limit = Math.min(100, Math.max(1, Number(req.query.limit ?? 25) || 25));
  const after =
    typeof req.query.after === 'string' ? Number(Buffer.from(req.query.after, 'base64url').toString()) : 0;
  const fields = new Set(String(req.query.fields ?? 'id').split(','));
  const matching = items.filter((i) => {
    const at = Date.parse(i.at);
    return (since === undefined || at >= since) && (until === undefined || at <= until);
  });
  const page = matching.slice(after, after + limit);
  const cursor = (n: number) => Buffer.from(String(n)).toString('base64url');
  const more = after + limit < matching.length;
  res.json({
    data: page.map((item) => shape(item, fields)),
    ...(page.length > 0
      ? {
          paging: {
            cursors: { before: cursor(after), after: cursor(after + page.length) },
            ...(more
              ? {
                  next: `${req.protocol}://${req.get('host')}${req.path}?after=${cursor(after + page.length)}`,
                }
              : {}),
          },
        }
      : {}),
  });
}

/** Graph's timestamps: `2026-04-15T14:30:00+0000`. */
export const graphTime = (iso: string) => iso.replace(/\.\d{3}Z$/, '+0000');

/** The Graph user a path names: `me` is the token's own user. */
export function graphUserOf(
  sim: SimState,
  platform: TPlatform,
  req: Request,
  named: string | undefined,
): string {
  return !named || named === 'me' ? numericIdOf(simUserOf(sim, platform, req), 17) : named;
}
