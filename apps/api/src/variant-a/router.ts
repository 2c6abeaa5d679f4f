import { type RequestHandler, Router } from 'express';
import type { Logger } from 'pino';
import { type ApiKeyVerifier, authenticate } from '../http/auth.js';
import { errorHandler, notFoundRoute } from '../http/error-handler.js';
import type { TIdempotent } from '../http/idempotency.js';
import { jsonBody } from '../http/json-body.js';
import { undecodableParam } from '../http/path-params.js';
import type { TRateLimits } from '../http/rate-limit.js';
import type { TMediaService } from '../media/media-service.js';
import type { TAccountService } from '../services/account-service.js';
import type { TMetricsService } from '../services/metrics-service.js';
import type { TPostService } from '../services/post-service.js';
import type { TPublishService } from '../services/publish-service.js';
import { accountsRouterA } from './accounts.route.js';
import { mediaRouterA } from './media.route.js';
import { metricsRouterA } from './metrics.route.js';
import { postsRouterA } from './posts.route.js';

export interface TVariantADeps {
  verifier: ApiKeyVerifier;
  posts: TPostService;
  publishing: TPublishService;
  accounts: TAccountService;
  engagement: TMetricsService;
  media: TMediaService;
  publicUrl: string;
  logger: Logger;
  bodyLimit: string;
  rateLimits: TRateLimits;
  /** `Idempotency-Key` on the routes that make something (see http/idempotency.ts). */
  idempotent: TIdempotent;
  /** Replaces API-key authentication (the dashboard authenticates by session and sets the same `req.auth`). */
  authenticate?: RequestHandler;
}

const undecodable = undecodableParam(
  'post',
  'Check the post id in the path; it is the id returned by create or list.',
);

/** `/api`: camelCase, `{error, fix?, details?}`, Bearer or x-api-key. */
export function variantARouter(deps: TVariantADeps): Router {
  const router = Router();
  // Authenticate before parsing: bodies of unauthenticated requests are never read.
  // Per IP before authentication: requests with wrong keys count too, so keys cannot be guessed at speed.
  router.use(deps.rateLimits.perIpA);
  router.use(deps.authenticate ?? authenticate(deps.verifier, { allowXApiKey: true }));
  router.use(jsonBody(deps.bodyLimit));
  // After parsing: whether create/update publishes depends on `published` in the body.
  router.use(deps.rateLimits.publishA);
  router.use(metricsRouterA(deps.engagement));
  router.use(postsRouterA(deps.posts, deps.publishing, deps.idempotent));
  router.use(accountsRouterA(deps.accounts));
  router.use(mediaRouterA(deps.media, deps.publicUrl, deps.idempotent));
  router.use(notFoundRoute);
  router.use(undecodable);
  router.use(errorHandler('A', deps.logger));
  return router;
}
