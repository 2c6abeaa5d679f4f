// The browser-safe part of the domain (no `node:` imports) for the dashboard: its composer counts and refuses
// text exactly as the API will, and its forms offer the API's own choices, because they use the same code.

export {
  mediaFitness,
  NETWORK_FILE_LIMITS,
  type TFitnessItem,
  type TFitnessNote,
  type TNetworkFitness,
} from './media-fitness.js';
export { findMediaViolations } from './media-rules.js';
export { NETWORK_TEXT_LIMITS, PLATFORMS, THREAD_GROUP, type TPlatform } from './platforms.js';
export {
  describeViolation,
  findTextViolations,
  measureFor,
  type TTextViolation,
  textLength,
} from './text-length.js';
export { planThreadDelivery, type TPlannedItem } from './thread-plan.js';
export { WEBHOOK_EVENT_TYPES } from './webhook-b.js';
export { YOUTUBE_TITLE_MAX, youtubeDescription, youtubeTitle } from './youtube-text.js';
