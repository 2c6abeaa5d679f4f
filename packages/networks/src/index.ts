export { blueskyRecordKey } from './bluesky-rkey.js';
export * from './connector.js';
export { createConnectors, type TConnectorsConfig } from './connector-registry.js';
export { classifyHttpError, createHttpClient, truncateBody } from './http-client.js';
export { fitImage, type TFitRequest, type TFitResult } from './image-fit.js';
export {
  createMediaFetcher,
  type TFetchedMedia,
  type TFetchMedia,
  type TMediaFetchConfig,
  type TMediaRequest,
  type TOwnMediaSource,
} from './media-fetch.js';
export type { TMetricsOutcome, TMetricsRead, TMetricsRef } from './metrics-reader.js';
export { checkedIdentities } from './oauth/answers.js';
export {
  createBlueskySession,
  isSessionJwt,
  jwtExpiresAt,
  refreshBlueskySession,
  type TBlueskySessionCall,
} from './oauth/bluesky-session.js';
export {
  CREDENTIAL_CHECKS,
  CredentialRefusedError,
  type TCredentialCheckOptions,
} from './oauth/credential-check.js';
export { newAuthorizationSecrets } from './oauth/grants.js';
export { MASTODON_SCOPES, registerMastodonApp } from './oauth/mastodon-oauth.js';
export {
  OAUTH_APP_PLATFORMS,
  OAUTH_ENDPOINTS,
  OAUTH_PROVIDERS,
  oauthProviderOf,
  refreshDueAtOf,
  resolveOAuthApp,
} from './oauth/oauth-registry.js';
export {
  OAuthError,
  type TConnectedIdentity,
  type TOAuthApp,
  type TOAuthCall,
  type TOAuthFailureKind,
  type TOAuthProvider,
  type TTokenSet,
} from './oauth/oauth-types.js';
export { guardPermissions, permissionFailure } from './permissions/permission-guard.js';
export {
  createSpoolBudget,
  type TSpoolBudget,
  type TSpoolBudgetConfig,
  type TSpoolLease,
  type TSpoolRefusal,
} from './spool-budget.js';
