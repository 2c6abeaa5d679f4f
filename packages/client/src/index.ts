// @social-posts/client: a typed client of the social post publishing service's two API variants, built on its
// OpenAPI document (src/generated, from GET /openapi.json), with no runtime dependencies (Node 20+'s fetch).
export { createClient } from './client.js';
export type {
  TAccountA,
  TAccountB,
  TCall,
  TClientA,
  TClientV1,
  TCreatePostA,
  TCreatePostB,
  TDeliveryB,
  TIterateOptions,
  TListOptions,
  TPostA,
  TPostB,
  TSpsClient,
  TUpdatePostB,
  TWebhookB,
  TWebhookCreatedB,
} from './client-types.js';
export {
  SpsApiError,
  SpsApiErrorA,
  SpsApiErrorB,
  SpsTransportError,
  type TErrorBodyA,
  type TErrorBodyB,
  type TVariant,
} from './errors.js';
export type { components, operations, paths } from './generated/openapi.js';
export { OPERATIONS } from './generated/operations.js';
export type {
  TBodyOf,
  TCallInput,
  TCallOptions,
  TOperationId,
  TQueryOf,
  TResultOf,
} from './operation-types.js';
export { paginate, type TPage, type TPaginateOptions } from './paginate.js';
export { DEFAULT_RETRY, parseRetryAfter, type TRetryOptions } from './retry.js';
export { KEYED_OPERATIONS, type TClientOptions, type TRetryEvent } from './transport.js';
export {
  type TVerifyOptions,
  type TWebhookEvent,
  type TWebhookEventType,
  type TWebhookFailure,
  type TWebhookHeaders,
  verifyServiceSignature,
  verifyStandardWebhook,
  verifyWebhook,
  WebhookVerificationError,
} from './webhooks.js';
