import type { Request, Response, Router } from 'express';
import { answerOrHang, networkMiddleware, type SimState, type TErrorRenderer } from './sim-state.js';

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

function requireHeaders(req: Request, res: Response): boolean {
  if (!req.headers.authorization?.startsWith('Bearer ')) {
    linkedInError(res, 401, 'INVALID_ACCESS_TOKEN', 'Empty oauth2 access token', 65600);
    return false;
  }
  if (!/^\d{6}$/.test(String(req.headers['linkedin-version'] ?? ''))) {
    linkedInError(res, 426, 'NONEXISTENT_VERSION', 'Requested version is not active');
    return false;
  }
  return true;
}

export function registerLinkedInSim(router: Router, sim: SimState): void {
  router.use(networkMiddleware(sim, 'linkedin', renderLinkedInError));

  router.post('/rest/posts', (req, res) => {
    if (!requireHeaders(req, res)) return;
    const body = (req.body ?? {}) as { author?: string; commentary?: string; lifecycleState?: string };
    if (!body.author?.startsWith('urn:li:') || body.lifecycleState !== 'PUBLISHED') {
      linkedInError(res, 422, 'UNPROCESSABLE_ENTITY', 'ERROR :: /author :: is not a valid urn', 100);
      return;
    }
    const urn = `urn:li:share:${sim.nextNumericId()}`;
    sim.addPost({
      platform: 'linkedin',
      remoteId: urn,
      text: body.commentary ?? '',
      replyTo: null,
      media: null,
      idempotencyKey: null,
    });
    // The Posts API answers 201 with an empty body; the new URN is only in the x-restli-id header.
    answerOrHang(res, () => res.status(201).set('x-restli-id', urn).end());
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
