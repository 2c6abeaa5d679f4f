export { createNetworkSimApp, startNetworkSim, type TRunningSim } from './server.js';
export {
  SimState,
  type TFault,
  type TFaultKind,
  type TSimPost,
  type TSimRequest,
} from './sim-state.js';
export { TIKTOK_SIM_PRIVATE_TOKEN, TIKTOK_SIM_VERIFIED_PREFIXES } from './tiktok.sim.js';
