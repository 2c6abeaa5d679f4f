export {
  assertDeliverableUrl,
  assertFetchableMediaUrl,
  ForbiddenAddressError,
  guardedLookup,
} from './address-guard.js';
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
} from './media-fetch.js';
export { sniffMedia, type TSniffed } from './media-sniff.js';
