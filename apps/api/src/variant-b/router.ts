import type { TSettingsRepository } from '@sps/db';
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
import type { TConnectService } from '../services/connect-service.js';
import type { TMetricsService } from '../services/metrics-service.js';
import type { TPostService } from '../services/post-service.js';
import type { TPublishService } from '../services/publish-service.js';
import type { TWebhookService } from '../services/webhook-service.js';
import { accountsRouterB } from './accounts.route.js';
import { connectRouterB } from './connect.route.js';
import { mediaRouterB } from './media.route.js';
import { metricsRouterB } from './metrics.route.js';
import { postsRouterB } from './posts.route.js';
import { webhooksRouterB } from './webhooks.route.js';

export interface TVariantBDeps {
  verifier: ApiKeyVerifier;
  posts: TPostService;
  publishing: TPublishService;
  accounts: TAccountService;
  engagement: TMetricsService;
  settings: TSettingsRepository;
  webhooks: TWebhookService;
  connect: TConnectService;
  media: TMediaService;
  publicUrl: string;
  /** tus 1.0 resumable uploads (`/v1/media/uploads`). */
  tusUploads: RequestHandler;
  logger: Logger;
  bodyLimit: string;
  rateLimits: TRateLimits;
  /** `Idempotency-Key` on the routes that make something (see http/idempotency.ts). */
  idempotent: TIdempotent;
  /** Replaces API-key authentication (the dashboard authenticates by session and sets the same `req.auth`). */
  authenticate?: RequestHandler;
}

const undecodable = undecodableParam('resource', 'Check the id in the path.');

/** `/v1`: snake_case, `{error, code, details}`, Bearer only. */
export function variantBRouter(deps: TVariantBDeps): Router {
  const router = Router();
  // tus discovery without an API key (a browser's CORS preflight carries none): configuration only, no
  // upload is named or touched. With an Authorization header it is authenticated like everything else.
  router.options(['/media/uploads', '/media/uploads/:uploadId'], (req, res, next) => {
    if (req.headers.authorization === undefined && deps.authenticate === undefined)
      deps.tusUploads(req, res, next);
    else next();
  });
  router.use(
    deps.authenticate ?? authenticate(deps.verifier, { allowXApiKey: false, rateLimitHeaders: true }),
  );
  // Per key, before the body is read and before any route: a refused request has no side effect.
  router.use(deps.rateLimits.perKeyB);
  router.use(jsonBody(deps.bodyLimit));
  router.use(metricsRouterB(deps.engagement));
  router.use(postsRouterB(deps.posts, deps.publishing, deps.idempotent));
  router.use(accountsRouterB(deps.accounts, deps.settings));
  router.use(connectRouterB(deps.connect));
  router.use(webhooksRouterB(deps.webhooks, deps.idempotent));
  router.all(['/media/uploads', '/media/uploads/:uploadId'], deps.tusUploads);
  router.use(mediaRouterB(deps.media, deps.publicUrl, deps.idempotent));
  router.use(notFoundRoute);
  router.use(undecodable);
  router.use(errorHandler('B', deps.logger));
  return router;
}
