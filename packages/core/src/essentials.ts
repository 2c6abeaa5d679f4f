// `@sps/core/essentials`: the small part of the domain a short-lived process needs (the admin CLI answers in
// a fraction of a second): env parsing, keys, passwords, sealing and the account presenter. Nothing here
// loads twitter-text, luxon or the post schemas that `@sps/core` brings.
export { presentAccountB, type TSocialAccountRecord } from './account-view.js';
export { generateApiKey, hashApiKey, type TNewApiKey } from './api-key.js';
export { DEVELOPMENT_KEY_WARNING, parseAppEnv, ZCommonEnv } from './env-schema.js';
export { hashPassword, passwordProblem } from './password.js';
export { isPlatform, PLATFORMS, type TPlatform } from './platforms.js';
export { sealCredentials, type TSocialCredentials } from './social-credentials.js';
export { UUID_PATTERN } from './text-fields.js';
