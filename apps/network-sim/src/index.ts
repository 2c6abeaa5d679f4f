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
