// Fetching URLs that API users chose (webhook endpoints, media to download) without reaching this
// deployment's own network: the address policy checked at connect time on every hop, and the media
// download's bounded client. Used by the connectors, the webhooks worker and the API's upload from a URL,
// none of which should need the others to get it.
export {
  assertDeliverableUrl,
  ForbiddenAddressError,
  guardedLookup,
  type TAddressPolicy,
} from './address-guard.js';
export {
  createMediaClient,
  DEFAULTS,
  MediaRefusal,
  openMediaDownload,
  refusalOf,
  shown,
  type TDownloadPolicy,
  type TOpenedMedia,
} from './media-download.js';
