import type { Express, Request, Response, Router } from 'express';
import { grantedScopesOf, hashIdOf, numericIdOf, simUserOf } from './oauth/oauth-store.js';
import { perSim } from './per-sim.js';
import type { SimState } from './sim-state.js';

/**
 * LinkedIn organization pages: who administers what, the Organization Access Control finder
 * (`GET /rest/organizationAcls?q=roleAssignee`, r_organization_admin or rw_organization_admin,
 * https://learn.microsoft.com/en-us/linkedin/marketing/community-management/organizations/organization-access-control-by-role),
 * the Organization Lookup API (`GET /rest/organizations/{id}`), and the rules for acting as an
 * organization: the token needs w_organization_social (r_organization_social to read its posts) and the
 * member an approved posting role, else 403. The refusal of an author the member may not post as is the
 * body LinkedIn gives (https://github.com/n8n-io/n8n/issues/1714): "Field Value validation failed in
 * REQUEST_BODY: Data Processing Exception while processing fields [/author]".
 *
 * Every simulated member administers one organization of their own (`<user> Company`);
 * `POST /__sim/linkedin/organizations {user, organization_id, name?, role?, state?}` adds or changes a role.
 * A token from outside (the admin CLI's `--token`) speaks for `sim_user` with every scope.
 */

interface TAcl {
  user: string;
  organizationId: string;
  name: string;
  role: string;
  state: string;
}

/** Roles that may post as the organization (Posts API). */
const POSTING_ROLES = new Set(['ADMINISTRATOR', 'DIRECT_SPONSORED_CONTENT_POSTER', 'CONTENT_ADMINISTRATOR']);

const aclsBySim = perSim<TAcl[]>(() => []);

function aclsOf(sim: SimState, user: string): TAcl[] {
  const all = aclsBySim(sim);
  if (!all.some((a) => a.user === user)) {
    all.push({
      user,
      organizationId: numericIdOf(`${user}#org`, 8),
      name: `${user} Company`,
      role: 'ADMINISTRATOR',
      state: 'APPROVED',
    });
  }
  return all.filter((a) => a.user === user);
}

type TErr = (res: Response, status: number, code: string, message: string, serviceErrorCode?: number) => void;

const versionOf = (req: Request) => `${String(req.headers['linkedin-version'] ?? '')}01`;

/** The scope a call needs is missing from a token the simulator issued (403 as LinkedIn answers it). */
function lacksScope(sim: SimState, req: Request, anyOf: string[]): boolean {
  const granted = grantedScopesOf(sim, 'linkedin', req);
  return granted !== null && !anyOf.some((scope) => granted.has(scope));
}

/** LinkedIn's answer to a post create without the scope it needs; true, as `refuseAuthor` returns. */
function createDenied(req: Request, res: Response, err: TErr): true {
  err(
    res,
    403,
    'ACCESS_DENIED',
    `Not enough permissions to access: partnerApiPostsExternal.CREATE.${versionOf(req)}`,
    100,
  );
  return true;
}

/**
 * Why the member behind the request may not act as `author` (a post's author, a comment's actor, an
 * upload's owner); null when they may. The answer is sent when refused.
 */
export function refuseAuthor(sim: SimState, req: Request, res: Response, author: string, err: TErr): boolean {
  const org = /^urn:li:organization:(\d+)$/.exec(author)?.[1];
  if (!org) {
    if (author.startsWith('urn:li:person:') && lacksScope(sim, req, ['w_member_social'])) {
      return createDenied(req, res, err);
    }
    return false;
  }
  if (lacksScope(sim, req, ['w_organization_social'])) {
    return createDenied(req, res, err);
  }
  const user = simUserOf(sim, 'linkedin', req);
  const allowed = aclsOf(sim, user).some(
    (a) => a.organizationId === org && a.state === 'APPROVED' && POSTING_ROLES.has(a.role),
  );
  if (!allowed) {
    err(
      res,
      403,
      'ACCESS_DENIED',
      'Field Value validation failed in REQUEST_BODY: Data Processing Exception while processing fields [/author]',
      100,
    );
    return true;
  }
  return false;
}

/** Reading an organization's posts (Find Posts by Author) needs r_organization_social. */
export function refuseOrganizationRead(
  sim: SimState,
  req: Request,
  res: Response,
  author: string,
  err: TErr,
): boolean {
  if (!author.startsWith('urn:li:organization:') || !lacksScope(sim, req, ['r_organization_social']))
    return false;
  err(
    res,
    403,
    'ACCESS_DENIED',
    `Not enough permissions to access: partnerApiPostsExternal.FINDER-author.${versionOf(req)}`,
    100,
  );
  return true;
}

export function registerLinkedInOrganizations(
  router: Router,
  sim: SimState,
  requireHeaders: (req: Request, res: Response) => boolean,
  err: TErr,
): void {
  router.get('/rest/organizationAcls', (req, res) => {
    if (!requireHeaders(req, res)) return;
    if (req.query.q !== 'roleAssignee') {
      err(res, 400, 'ILLEGAL_ARGUMENT', 'Invalid query parameters passed to request', 100);
      return;
    }
    if (lacksScope(sim, req, ['r_organization_admin', 'rw_organization_admin'])) {
      err(
        res,
        403,
        'ACCESS_DENIED',
        `Not enough permissions to access: organizationAcls.FINDER-roleAssignee.${versionOf(req)}`,
        100,
      );
      return;
    }
    const user = simUserOf(sim, 'linkedin', req);
    const role = typeof req.query.role === 'string' ? req.query.role : null;
    const state = typeof req.query.state === 'string' ? req.query.state : null;
    const count = Math.min(100, Math.max(1, Number(req.query.count ?? 10) || 10));
    const start = Math.max(0, Number(req.query.start ?? 0) || 0);
    const matching = aclsOf(sim, user).filter(
      (a) => (!role || a.role === role) && (!state || a.state === state),
    );
    res.json({
      paging: { start, count, links: [], total: matching.length },
      elements: matching.slice(start, start + count).map((a) => ({
        roleAssignee: `urn:li:person:${hashIdOf(user, 10)}`,
        role: a.role,
        state: a.state,
        organization: `urn:li:organization:${a.organizationId}`,
      })),
    });
  });

  router.get('/rest/organizations/:id', (req, res) => {
    if (!requireHeaders(req, res)) return;
    const all = aclsBySim.peek(sim) ?? [];
    const found = all.find((a) => a.organizationId === req.params.id);
    if (!found) {
      err(res, 404, 'NOT_FOUND', `Organization ${req.params.id} does not exist`);
      return;
    }
    res.json({
      id: Number(found.organizationId),
      localizedName: found.name,
      vanityName: found.name.toLowerCase().replace(/[^a-z0-9]+/g, '-'),
    });
  });
}

export function registerLinkedInOrganizationControls(app: Express, sim: SimState): void {
  app.post('/__sim/linkedin/organizations', (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const user = typeof body.user === 'string' ? body.user : '';
    const organizationId = typeof body.organization_id === 'string' ? body.organization_id : '';
    if (!user || !/^\d{1,20}$/.test(organizationId)) {
      res.status(400).json({ error: 'user and a numeric organization_id are required' });
      return;
    }
    aclsOf(sim, user);
    const all = aclsBySim.peek(sim) ?? [];
    const existing = all.find((a) => a.user === user && a.organizationId === organizationId);
    const entry: TAcl = {
      user,
      organizationId,
      name: typeof body.name === 'string' ? body.name : (existing?.name ?? `Organization ${organizationId}`),
      role: typeof body.role === 'string' ? body.role : 'ADMINISTRATOR',
      state: typeof body.state === 'string' ? body.state : 'APPROVED',
    };
    if (existing) Object.assign(existing, entry);
    else all.push(entry);
    res.status(204).end();
  });
}
