import {
  createAccountRepository,
  createEventFeedRepository,
  createIdempotencyRepository,
  createMastodonAppRepository,
  createMediaRepository,
  createMetricsRepository,
  createOAuthStateRepository,
  createOwnerRepository,
  createPostRepository,
  createPublishRepository,
  createSettingsRepository,
  createSocialAccountRepository,
  createUsageRepository,
  createWebhookRepository,
  pingDb,
  type TDb,
} from '@sps/db';
import type { TQueues, TRedis } from '@sps/queue';
import { createStorage, type TStorage } from '@sps/storage';
import express, { type Express } from 'express';
import type { Logger } from 'pino';
import { dashboardApiRouter } from './dashboard/dashboard.route.js';
import { dashboardStatic } from './dashboard/dashboard-static.js';
import { LiveEvents } from './dashboard/live-events.js';
import { SessionStore } from './dashboard/session-store.js';
import { createUsageService } from './dashboard/usage-service.js';
import type { TApiEnv } from './env.js';
import { ApiKeyVerifier } from './http/auth.js';
import { createIdempotency } from './http/idempotency.js';
import { createRateLimits, WindowLimiter } from './http/rate-limit.js';
import { requestLog } from './http/request-log.js';
import { mcpRouter } from './mcp/mcp.route.js';
import { mediaServeRouter } from './media/media-serve.route.js';
import { createMediaService } from './media/media-service.js';
import { RedisLocker } from './media/tus-redis-locker.js';
import { createTusReservations } from './media/tus-reservations.js';
import { createTusStaging, TUS_EXPIRATION_MS } from './media/tus-staging.js';
import { type TTusStaging, tusUploadsHandler } from './media/tus-uploads.js';
import { oauthCallbackRouter } from './oauth/oauth-callback.route.js';
import { openApiRouter } from './openapi/openapi.route.js';
import { adminAuth, localOnly, notFound } from './ops/admin-auth.js';
import { bullBoardRouter } from './ops/bull-board.js';
import { createApiMetrics, type TApiMetrics } from './ops/metrics.js';
import { createAccountService } from './services/account-service.js';
import { createConnectService } from './services/connect-service.js';
import { createMetricsService } from './services/metrics-service.js';
import { createPostJobs } from './services/post-jobs.js';
import { createPostService } from './services/post-service.js';
import { createPublishService } from './services/publish-service.js';
import { queueSchedule } from './services/queue-schedule.js';
import { createTwitterAllowance } from './services/twitter-allowance.js';
import { createWebhookService } from './services/webhook-service.js';
import { variantARouter } from './variant-a/router.js';
import { variantBRouter } from './variant-b/router.js';

export interface TApiDeps {
  env: TApiEnv;
  db: TDb;
  redis: TRedis;
  queues: TQueues;
  logger: Logger;
  /** The media store; built from MEDIA_STORAGE when not given. */
  storage?: TStorage;
  /** Where unfinished tus uploads wait; built from MEDIA_STORAGE when not given. */
  tusStaging?: TTusStaging;
}

export interface TApi {
  app: Express;
  verifier: ApiKeyVerifier;
  metrics: TApiMetrics;
  /** The dashboard's live streams: closed first on shutdown, so the HTTP server can drain. */
  live: LiveEvents;
  /** The media store (tests give it to an in-process publisher). */
  storage: TStorage;
}

export function createApi({
  env,
  db,
  redis,
  queues,
  logger,
  storage: givenStorage,
  tusStaging,
}: TApiDeps): TApi {
  const storage = givenStorage ?? createStorage(env.mediaStorage);
  const mediaRepository = createMediaRepository(db);
  // Shared by every API instance through Redis: unfinished tus uploads' quota and their locks.
  const tusReservations = createTusReservations(redis, env.QUEUE_PREFIX, TUS_EXPIRATION_MS);
  const tusLocker = new RedisLocker(redis, { prefix: env.QUEUE_PREFIX });
  const media = createMediaService({ media: mediaRepository, storage, reservations: tusReservations });
  const accountsRepo = createAccountRepository(db);
  const settings = createSettingsRepository(db);
  const metrics = createApiMetrics(queues);
  // Failed authentications per client address: wrong API keys, and OAuth callbacks with unknown states.
  const authFailures = new WindowLimiter(
    redis,
    `${env.QUEUE_PREFIX}:rl:auth-failures`,
    env.AUTH_FAILURES_PER_MINUTE,
    Math.max(1, Math.round(60 * env.RATE_LIMIT_WINDOW_SCALE)),
    logger,
  );
  const verifier = new ApiKeyVerifier(
    accountsRepo,
    {
      ttlMs: env.API_KEY_CACHE_TTL,
      // A quarter of the pool at most for keys nobody has verified lately: a flood of made-up keys waits
      // for its turn there, while requests with known keys keep the rest.
      lookupConcurrency: Math.floor(env.DB_POOL_MAX / 4),
      failures: authFailures,
      onLookup: (outcome) => metrics.keyLookups.inc({ outcome }),
      onRefused: (reason) => metrics.authRefusals.inc({ reason }),
    },
    logger,
  );
  const postRepository = createPostRepository(db);
  const socialAccounts = createSocialAccountRepository(db);
  const jobs = createPostJobs(queues, logger);
  // The dashboard's live updates: the outbox for what it records, change notices for the rest.
  const live = new LiveEvents({
    feed: createEventFeedRepository(db),
    redis,
    prefix: env.QUEUE_PREFIX,
    logger,
    pollMs: env.DASHBOARD_EVENTS_POLL,
    maxPerAccount: env.DASHBOARD_EVENTS_PER_ACCOUNT,
    maxTotal: 5_000,
  });
  const onChange = (accountId: string, postId: string | null) => live.postChanged(accountId, postId);
  const posts = createPostService({ posts: postRepository, jobs, queues, onChange });
  const twitterAllowance = createTwitterAllowance(createUsageRepository(db), env.twitterAllowance);
  const publishing = createPublishService({
    posts: postRepository,
    publishing: createPublishRepository(db),
    socialAccounts,
    queues,
    logger,
    availability: env.availability,
    waitMs: env.PUBLISH_WAIT,
    twitterAllowance,
    onChange,
  });
  const rateLimits = createRateLimits({ env, redis, logger });
  const idempotent = createIdempotency({
    keys: createIdempotencyRepository(db),
    encryptionKey: env.encryptionKey,
    // Longer than any request holds its key: Variant A's publishing requests wait up to PUBLISH_WAIT.
    leaseMs: env.PUBLISH_WAIT + env.IDEMPOTENCY_LEASE,
    logger,
  });
  const accounts = createAccountService({ socialAccounts, settings, jobs });
  const connect = createConnectService({
    socialAccounts,
    states: createOAuthStateRepository(db),
    mastodonApps: createMastodonAppRepository(db),
    queues,
    logger,
    config: {
      publicUrl: env.publicUrl,
      redirectOrigins: env.redirectOrigins,
      oauthApps: env.oauthApps,
      networkBaseUrls: env.networkBaseUrls,
      apiVersions: { linkedin: env.LINKEDIN_API_VERSION },
      timeoutMs: env.OAUTH_TIMEOUT,
      encryptionKey: env.encryptionKey,
    },
  });
  const metricsService = createMetricsService({
    metrics: createMetricsRepository(db),
    queues,
    refreshLimiter: new WindowLimiter(
      redis,
      `${env.QUEUE_PREFIX}:rl:metrics-refresh-hour`,
      env.METRICS_REFRESH_PER_HOUR,
      Math.max(1, Math.round(3600 * env.RATE_LIMIT_WINDOW_SCALE)),
      logger,
    ),
  });
  const webhooks = createWebhookService({
    webhooks: createWebhookRepository(db),
    queues,
    logger,
    encryptionKey: env.encryptionKey,
    allowPrivateUrls: env.WEBHOOK_ALLOW_PRIVATE_URLS,
  });

  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', env.TRUST_PROXY);
  // Express's default weak ETag hashes every JSON answer; API clients do not send conditional requests.
  app.set('etag', false);
  app.use(requestLog(logger));

  app.use(metrics.middleware);
  // Operator routes: /metrics names routes, queue depths and refusal counts, nothing a tenant should read.
  // With ADMIN_TOKEN it needs the token. Without it, only a scraper on this machine reaching the socket
  // directly gets it, and only where no proxy can be in front (TRUST_PROXY unset) and not in production: a
  // proxy on the same host would make every outside request look local. Bull Board is off without the token.
  const metricsGuard = env.ADMIN_TOKEN
    ? adminAuth(env.ADMIN_TOKEN)
    : env.NODE_ENV !== 'production' && env.TRUST_PROXY === 0
      ? localOnly()
      : notFound();
  app.get('/metrics', metricsGuard, async (_req, res) => {
    res.set('Content-Type', metrics.registry.contentType).send(await metrics.registry.metrics());
  });
  if (env.ADMIN_TOKEN) {
    app.use('/admin/queues', adminAuth(env.ADMIN_TOKEN), bullBoardRouter(queues, '/admin/queues'));
  }

  // The two variants first: almost every request is one of theirs, and each router layer before them is
  // tried on every request. No other route starts with /api/ or /v1/.
  const depsA = {
    verifier,
    posts,
    publishing,
    accounts,
    engagement: metricsService,
    media,
    publicUrl: env.publicUrl,
    logger,
    bodyLimit: env.BODY_LIMIT,
    rateLimits,
    idempotent,
  };
  const staging =
    tusStaging ??
    createTusStaging(env.mediaStorage, env.MEDIA_DIR, {
      redis,
      storage,
      prefix: env.QUEUE_PREFIX,
    });
  const tusShared = { locker: tusLocker, reservations: tusReservations };
  const tusUploads = tusUploadsHandler({ media, staging, publicUrl: env.publicUrl, logger, ...tusShared });
  // The dashboard's composer uploads large files with tus behind its session (and CSRF token). Its Location
  // is a path (no PUBLIC_URL origin): the page's CSP lets it talk to its own origin only, whatever PUBLIC_URL.
  const dashboardTus = tusUploadsHandler({
    media,
    staging,
    publicUrl: '',
    logger,
    path: '/dashboard/api/v1/media/uploads',
    sweepExpired: false,
    ...tusShared,
  });
  const depsB = { ...depsA, settings, webhooks, connect, tusUploads };
  app.use('/v1', variantBRouter(depsB));
  app.use('/api', variantARouter(depsA));

  // Uploaded media to anyone holding its URL (networks fetch it from here): no API key.
  app.use(mediaServeRouter({ media: mediaRepository, storage, logger }));

  // The API description and its docs page: public, before any authentication.
  app.use(openApiRouter());
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const [postgres, redisUp] = await Promise.all([
      pingDb(db),
      redis.ping().then(
        (r) => r === 'PONG',
        () => false,
      ),
    ]);
    res
      .status(postgres && redisUp ? 200 : 503)
      .json({ status: postgres && redisUp ? 'ready' : 'not_ready', postgres, redis: redisUp });
  });

  // Where the networks send the user back after consent: no API key, the single-use state binds it.
  const dashboardIdleMs = 12 * 60 * 60 * 1000;
  const sessions = new SessionStore(redis, {
    prefix: env.QUEUE_PREFIX,
    idleMs: dashboardIdleMs,
    absoluteMs: 7 * 24 * 60 * 60 * 1000,
  });
  app.use(oauthCallbackRouter(connect, logger, authFailures, sessions));
  app.use(
    '/mcp',
    mcpRouter({
      verifier,
      posts,
      publishing,
      accounts,
      engagement: metricsService,
      settings,
      webhooks,
      connect,
      media,
      publicUrl: env.publicUrl,
      mediaDownload: {
        allowPrivate: env.MEDIA_ALLOW_PRIVATE_URLS,
        videoTimeoutMs: env.MEDIA_VIDEO_DOWNLOAD_TIMEOUT,
      },
      logger,
      bodyLimit: env.BODY_LIMIT,
      idempotent,
      // MCP messages count against the key's Variant B limits: publishing tools the hourly publish limit,
      // everything else the per-minute limit.
      limits: [rateLimits.perKeyB],
    }),
  );

  // The owners' dashboard: its JSON API (session + CSRF in front of the same routers), then the built web app.
  // Sign-in limits hold even with RATE_LIMITS=off: they guard passwords, not capacity.
  const signInLimiter = (name: string, limit: number) =>
    new WindowLimiter(redis, `${env.QUEUE_PREFIX}:rl:dash:${name}`, limit, 15 * 60, logger);
  const owners = createOwnerRepository(db);
  app.use(
    '/dashboard/api',
    dashboardApiRouter({
      store: sessions,
      owners,
      accounts: accountsRepo,
      redis,
      prefix: env.QUEUE_PREFIX,
      logger,
      signInLimits: { perIp: signInLimiter('signin-ip', 30), perEmail: signInLimiter('signin-email', 10) },
      idleMs: dashboardIdleMs,
      secureCookies: env.secureCookies,
      queueSchedule: (accountId) => queueSchedule({ accounts, posts }, accountId),
      usage: createUsageService({ owners, rateLimits, tiersB: env.tiersB, twitterAllowance }),
      connectOptions: () => connect.options(),
      variantA: (authenticate) => variantARouter({ ...depsA, authenticate }),
      variantB: (authenticate) => variantBRouter({ ...depsB, tusUploads: dashboardTus, authenticate }),
      media,
      mediaUsage: mediaRepository,
      publicUrl: env.publicUrl,
      live,
      eventsHeartbeatMs: env.DASHBOARD_EVENTS_HEARTBEAT,
    }),
  );
  app.use('/dashboard', dashboardStatic());

  app.use((req, res) => {
    res.status(404).json({ error: `No route ${req.method} ${req.path}` });
  });
  return { app, verifier, metrics, live, storage };
}
