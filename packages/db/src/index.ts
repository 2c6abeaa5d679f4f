export {
  createAccountRepository,
  PLANS,
  type TAccountRepository,
  type TAuthenticatedKey,
  type TPlan,
} from './account-repository.js';
export { createDb, isDbUnavailable, pingDb, type TDb, type TDbOptions, type TTx } from './client.js';
export {
  createEventFeedRepository,
  FEED_START_ID,
  type TEventFeedRepository,
  type TFeedEvent,
} from './event-feed-repository.js';
export { recordEvent, type TEventType } from './event-repository.js';
export {
  createIdempotencyRepository,
  type TIdempotencyClaim,
  type TIdempotencyClaimInput,
  type TIdempotencyRepository,
  type TIdempotencyWrite,
  writeIdempotencyInTx,
} from './idempotency-repository.js';
export { createMediaRepository, type TMediaRepository, type TNewMedia } from './media-repository.js';
export {
  createMetricsRepository,
  type TDueAccount,
  type TMetricsRepository,
  type TMetricTarget,
  type TSnapshotInput,
} from './metrics-repository.js';
export {
  deployMigrations,
  diffMigrationsToSchema,
  ensureDatabase,
  migrationStatus,
  type TMigrationPaths,
} from './migration-engine.js';
export {
  createMastodonAppRepository,
  createOAuthStateRepository,
  type TMastodonApp,
  type TMastodonAppRepository,
  type TOAuthState,
  type TOAuthStateInput,
  type TOAuthStateRepository,
} from './oauth-state-repository.js';
export { createOwnerRepository, type TApiKeyView, type TOwnerRepository } from './owner-repository.js';
export { parseDatabaseUrl } from './pgbouncer.js';
export { toPostRecord, toTargetRecord } from './post-mapper.js';
export { createPostRepository, type TPostRepository, type TUpdateOutcome } from './post-repository.js';
export type { TLoadedPost, TPublishAccount, TSegmentRef, TTargetUpdate } from './publish-batch-rows.js';
export type { TBeginOutcome, TBeginPublish } from './publish-begin.js';
export type { TAccountVersion, TPreparedAccount, TPrepareLoad } from './publish-prepare.js';
export { createPublishRepository, type TPublishRepository } from './publish-repository.js';
export { createQueueRepository, type TQueueRepository } from './queue-repository.js';
export {
  createSettingsRepository,
  DEFAULT_QUEUE_SETTINGS,
  type TSettingsRepository,
} from './settings-repository.js';
export {
  createSocialAccountRepository,
  type TConnectInput,
  type TReviveInput,
  type TSocialAccountRepository,
} from './social-account-repository.js';
export {
  createTokenRepository,
  type TReauthNotice,
  type TStoredToken,
  type TTokenRepository,
} from './token-repository.js';
export {
  createUsageRepository,
  type TReservation,
  type TUsageRepository,
  usageMonth,
} from './usage-repository.js';
export {
  createWebhookDeliveryRepository,
  type TAttemptInput,
  type TAttemptResult,
  type TDeactivation,
  type TDispatchedDelivery,
  type TWebhookDeliveryRepository,
} from './webhook-delivery-repository.js';
export {
  createWebhookRepository,
  type TRetryOutcome,
  type TWebhookRepository,
} from './webhook-repository.js';
