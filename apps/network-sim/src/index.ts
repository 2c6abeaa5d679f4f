export { LINKEDIN_SIM_MEMBER_READ_TOKEN } from './linkedin.sim.js';
export { SimFigures, simFiguresOf, type TSimFigures } from './metrics-state.sim.js';
export { OAuthSimStore, oauthStoreOf, SIM_CLIENT_ID, SIM_CLIENT_SECRET } from './oauth/oauth-store.js';
export { simOAuthEnv } from './oauth/sim-oauth-env.js';
export { createNetworkSimApp, startNetworkSim, type TRunningSim } from './server.js';
export {
  SimState,
  type TFault,
  type TFaultKind,
  type TSimPost,
  type TSimRequest,
} from './sim-state.js';
export { TIKTOK_SIM_PRIVATE_TOKEN, TIKTOK_SIM_VERIFIED_PREFIXES } from './tiktok.sim.js';
export { YOUTUBE_SIM_QUOTA_TOKEN, YOUTUBE_SIM_UPLOAD_LIMIT_TOKEN } from './youtube.sim.js';
