export { createNetworkSimApp, startNetworkSim, type TRunningSim } from './server.js';
export {
  SimState,
  type TFault,
  type TFaultKind,
  type TSimPost,
  type TSimRequest,
} from './sim-state.js';
