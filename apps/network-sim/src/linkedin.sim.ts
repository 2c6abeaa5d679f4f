import type { Request, Response, Router } from 'express';
import { registerLinkedInComments } from './linkedin-comments.sim.js';
import { registerLinkedInAssets, type TLinkedInAssets } from './linkedin-media.sim.js';
import { refuseAuthor, refuseOrganizationRead, registerLinkedInOrganizations } from './linkedin-orgs.sim.js';
import { answerOrHang, networkMiddleware, type SimState, type TErrorRenderer } from './sim-state.js';
import { LINKEDIN_COMMENT_MAX, LINKEDIN_COMMENTARY_MAX, linkedInShownLength } from './text-limits.sim.js';

function linkedInError(
  res: Response,
  status: number,
  code: string,
  message: string,
  serviceErrorCode?: number,
) {
  res.status(status).json({ status, ...(serviceErrorCode ? { serviceErrorCode } : {}), code, message });
}

/** Rest.li errors: `{ status, serviceErrorCode, code, message }`. */
const renderLinkedInError: TErrorRenderer = (res, fault) => {
  switch (fault.kind) {
    case 'auth_expired':
      linkedInError(res, 401, 'EXPIRED_ACCESS_TOKEN', 'The token used in the request has expired', 65601);
      return;
    case 'rate_limited':
      res.set('retry-after', String(fault.retryAfterSeconds ?? 60));
      linkedInError(
        res,
        429,
        'TOO_MANY_REQUESTS',
        'Resource level throttle APPLICATION DAY limit for calls to this resource is reached.',
      );
      return;
    case 'rejected':
      linkedInError(res, 422, 'UNPROCESSABLE_ENTITY', 'ERROR :: /commentary :: is too long', 100);
      return;
    default:
      linkedInError(res, 503, 'SERVICE_UNAVAILABLE', 'Service Unavailable');
  }
};

/**
 * The Marketing API versions LinkedIn published and the day each stops being served, from the migrations
 * table (https://learn.microsoft.com/en-us/linkedin/marketing/integrations/migrations, read 2026-11-26:
 * 202510 until 2026-10-15, 202511 until 2026-11-16, 202601 until 2027-01-15, 202602 until 2027-02-15,
 * 202603 until 2027-03-16; no 202512 was published) and the recent-changes page for 202604-202607, whose
 * sunsets (about a year after release, mid-month) are not in the table yet and are estimated here. A month
 * LinkedIn never published, a sunset one, or one not released yet answers 426 NONEXISTENT_VERSION with the
 * version spelled as YYYYMMDD, e.g. `{"status":426,"code":"NONEXISTENT_VERSION","message":"Requested version
 * 20241101 is not active"}` (https://learn.microsoft.com/en-us/linkedin/marketing/versioning). Add a row
 * when LinkedIn publishes a version.
 */
const LINKEDIN_VERSIONS: Record<string, string> = {
  '202510': '2026-10-15',
  '202511': '2026-11-16',
  '202601': '2027-01-15',
  '202602': '2027-02-15',
  '202603': '2027-03-16',
  '202604': '2027-04-15',
  '202605': '2027-05-15',
  '202606': '2027-06-15',
  '202607': '2027-07-15',
};

export function linkedInVersionActive(version: string, now: Date = new Date()): boolean {
  if (!Object.hasOwn(LINKEDIN_VERSIONS, version)) return false;
  const until = LINKEDIN_VERSIONS[version] as string;
  const released = Date.UTC(Number(version.slice(0, 4)), Number(version.slice(4, 6)) - 1, 1);
  return now.getTime() >= released && now.getTime() < Date.parse(`${until}T00:00:00Z`);
}

function requireHeaders(req: Request, res: Response): boolean {
  if (!req.headers.authorization?.startsWith('Bearer ')) {
    linkedInError(res, 401, 'INVALID_ACCESS_TOKEN', 'Empty oauth2 access token', 65600);
    return false;
  }
  const version = String(req.headers['linkedin-version'] ?? '');
  if (!version) {
    linkedInError(
      res,
      400,
      'VERSION_MISSING',
      'A version must be present. Please specify a version by adding the LinkedIn-Version header.',
    );
    return false;
  }
  if (!linkedInVersionActive(version)) {
    const spelled = /^\d{6}$/.test(version) ? `${version}01` : version;
    linkedInError(res, 426, 'NONEXISTENT_VERSION', `Requested version ${spelled} is not active`);
    return false;
  }
  // Without it Rest.li falls back to protocol 1.0, where the encoded URN keys we send do not parse. Modeled:
  // the exact body LinkedIn returns here is not documented.
  if (req.headers['x-restli-protocol-version'] !== '2.0.0') {
    linkedInError(
      res,
      400,
      'ILLEGAL_ARGUMENT',
      'X-Restli-Protocol-Version 2.0.0 is required for this resource',
    );
    return false;
  }
  return true;
}

/** The URNs a post's `content` references: `media.id`, or each `multiImage.images[].id`. */
/** The post's content as sent, with what arrived for each referenced asset (tests compare the hashes). */
function withUploads(content: unknown, assets: TLinkedInAssets) {
  const c = content as { media?: { id?: string }; multiImage?: { images?: { id?: string }[] } };
  const ids = c.media ? [c.media.id] : (c.multiImage?.images ?? []).map((image) => image.id);
  return { ...(content as object), uploads: ids.map((id) => (id ? assets.uploaded(id) : null)) };
}

function contentProblem(content: unknown, assets: TLinkedInAssets): string | null {
  if (content === undefined) return null;
  const c = content as {
    media?: { id?: string; altText?: unknown };
    multiImage?: { images?: { id?: string; altText?: unknown }[] };
  };
  const refs = c.media
    ? [{ path: '/content/media', ...c.media }]
    : (c.multiImage?.images ?? []).map((image, i) => ({ path: `/content/multiImage/images/${i}`, ...image }));
  if (c.multiImage && (refs.length < 2 || refs.length > 20)) {
    return `ERROR :: /content/multiImage/images :: must hold 2 to 20 images, got ${refs.length}`;
  }
  if (refs.length === 0) return 'ERROR :: /content :: media or multiImage is required';
  for (const ref of refs) {
    if (typeof ref.altText === 'string' && ref.altText.length > 4086) {
      return `ERROR :: ${ref.path}/altText :: is longer than 4086 characters`;
    }
    const problem = ref.id ? assets.unusable(ref.id) : 'field is required but not found';
    if (problem) return `ERROR :: ${ref.path}/id :: ${problem}`;
  }
  return null;
}

/**
 * Reading a member's posts needs r_member_social, a restricted permission LinkedIn grants to few apps (the
 * service asks for w_member_social only). A bearer token containing this marker stands for one that has
 * it; every other token is refused the finder with 403 ACCESS_DENIED, as LinkedIn refuses it.
 * https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/posts-api (Permissions)
 */
export const LINKEDIN_SIM_MEMBER_READ_TOKEN = 'li-member-read';

export function registerLinkedInSim(router: Router, sim: SimState): void {
  router.use(networkMiddleware(sim, 'linkedin', renderLinkedInError));
  const assets = registerLinkedInAssets(
    router,
    requireHeaders,
    (res, status, code, message) => linkedInError(res, status, code, message),
    () => sim.nextNumericId(),
    (req, res, owner) => refuseAuthor(sim, req, res, owner, linkedInError),
  );
  registerLinkedInOrganizations(router, sim, requireHeaders, linkedInError);
  registerLinkedInComments(router, sim, requireHeaders, linkedInError);

  router.post('/rest/posts', (req, res) => {
    if (!requireHeaders(req, res)) return;
    const body = (req.body ?? {}) as {
      author?: string;
      commentary?: string;
      lifecycleState?: string;
      content?: unknown;
    };
    if (!body.author?.startsWith('urn:li:') || body.lifecycleState !== 'PUBLISHED') {
      linkedInError(res, 422, 'UNPROCESSABLE_ENTITY', 'ERROR :: /author :: is not a valid urn', 100);
      return;
    }
    // Posting as an organization needs w_organization_social and a posting role on its page.
    if (refuseAuthor(sim, req, res, body.author, linkedInError)) return;
    // Modeled, like the other Rest.li validation errors here: no page quotes LinkedIn's words for it.
    const shown = typeof body.commentary === 'string' ? linkedInShownLength(body.commentary) : 0;
    if (shown > LINKEDIN_COMMENTARY_MAX) {
      linkedInError(
        res,
        422,
        'UNPROCESSABLE_ENTITY',
        `ERROR :: /commentary :: length ${shown} exceeds the maximum of ${LINKEDIN_COMMENTARY_MAX}`,
        100,
      );
      return;
    }
    // A post may only reference media uploaded through the Images/Videos APIs and AVAILABLE. Modeled on
    // LinkedIn's Rest.li validation errors (`ERROR :: /path :: reason`, 422).
    const problem = contentProblem(body.content, assets);
    if (problem) {
      linkedInError(res, 422, 'UNPROCESSABLE_ENTITY', problem, 100);
      return;
    }
    const urn = `urn:li:share:${sim.nextNumericId()}`;
    sim.addPost({
      platform: 'linkedin',
      remoteId: urn,
      text: body.commentary ?? '',
      replyTo: null,
      media: body.content ? withUploads(body.content, assets) : null,
      idempotencyKey: null,
      author: body.author,
    });
    // The Posts API answers 201 with an empty body; the new URN is only in the x-restli-id header.
    answerOrHang(res, () => res.status(201).set('x-restli-id', urn).end());
  });

  /**
   * Find Posts by Author: `GET /rest/posts?q=author&author={encoded URN}` with `X-RestLi-Method: FINDER`,
   * `count` (10 by default, at most 100), `start`, `sortBy` CREATED or LAST_MODIFIED; newest first.
   */
  router.get('/rest/posts', (req, res) => {
    if (!requireHeaders(req, res)) return;
    if (req.query.q !== 'author' || typeof req.query.author !== 'string') {
      linkedInError(res, 400, 'ILLEGAL_ARGUMENT', 'Invalid query parameters passed to request', 100);
      return;
    }
    if (String(req.headers['x-restli-method'] ?? '').toUpperCase() !== 'FINDER') {
      linkedInError(res, 400, 'ILLEGAL_ARGUMENT', 'Missing X-RestLi-Method header: FINDER', 100);
      return;
    }
    const author = req.query.author;
    if (
      author.startsWith('urn:li:person:') &&
      !req.headers.authorization?.includes(LINKEDIN_SIM_MEMBER_READ_TOKEN)
    ) {
      linkedInError(
        res,
        403,
        'ACCESS_DENIED',
        `Not enough permissions to access: partnerApiPostsExternal.FINDER-author.${req.headers['linkedin-version']}01`,
        100,
      );
      return;
    }
    if (refuseOrganizationRead(sim, req, res, author, linkedInError)) return;
    const count = Math.min(100, Math.max(1, Number(req.query.count ?? 10) || 10));
    const start = Math.max(0, Number(req.query.start ?? 0) || 0);
    const posts = sim.timelineOf('linkedin', author);
    res.json({
      paging: { start, count, links: [], total: posts.length },
      elements: posts.slice(start, start + count).map((p) => ({
        id: p.remoteId,
        author,
        commentary: p.text,
        visibility: 'PUBLIC',
        lifecycleState: 'PUBLISHED',
        createdAt: Date.parse(p.at),
        publishedAt: Date.parse(p.at),
        lastModifiedAt: Date.parse(p.at),
        ...(p.media ? { content: p.media } : {}),
      })),
    });
  });

  router.post('/rest/socialActions/:target/comments', (req, res) => {
    if (!requireHeaders(req, res)) return;
    const target = req.params.target;
    const body = (req.body ?? {}) as { actor?: string; object?: string; message?: { text?: string } };
    const parent = sim.getPost('linkedin', target);
    if (!parent || parent.deleted || !body.actor || !body.message?.text) {
      linkedInError(res, 404, 'NOT_FOUND', `Not Found: ${target}`);
      return;
    }
    if (refuseAuthor(sim, req, res, body.actor, linkedInError)) return;
    if (body.message.text.length > LINKEDIN_COMMENT_MAX) {
      linkedInError(
        res,
        422,
        'UNPROCESSABLE_ENTITY',
        `ERROR :: /message/text :: length ${body.message.text.length} exceeds the maximum of ${LINKEDIN_COMMENT_MAX}`,
        100,
      );
      return;
    }
    const id = sim.nextNumericId();
    const urn = `urn:li:comment:(${target},${id})`;
    sim.addPost({
      platform: 'linkedin',
      remoteId: urn,
      text: body.message.text,
      replyTo: target,
      media: null,
      idempotencyKey: null,
    });
    answerOrHang(res, () =>
      res
        .status(201)
        .set('x-restli-id', urn)
        .json({ id, $URN: urn, actor: body.actor, object: target, message: { text: body.message?.text } }),
    );
  });

  router.delete('/rest/socialActions/:target/comments/:id', (req, res) => {
    if (!requireHeaders(req, res)) return;
    const post = sim.getPost('linkedin', `urn:li:comment:(${req.params.target},${req.params.id})`);
    if (!post || post.deleted) {
      linkedInError(res, 404, 'NOT_FOUND', 'Not Found');
      return;
    }
    post.deleted = true;
    res.status(204).end();
  });

  router.delete('/rest/posts/:urn', (req, res) => {
    if (!requireHeaders(req, res)) return;
    const post = sim.getPost('linkedin', req.params.urn);
    if (!post || post.deleted) {
      linkedInError(res, 404, 'NOT_FOUND', 'Not Found');
      return;
    }
    post.deleted = true;
    res.status(204).end();
  });
}

/** Same registration under the plain `register<Platform>Sim` spelling. */
export const registerLinkedinSim = registerLinkedInSim;
