import type { SimState } from './sim-state.js';

export interface TPerSim<T> {
  /** The simulator's state, made on first use. */
  (sim: SimState): T;
  /** The simulator's state if it was ever made, without making it. */
  peek(sim: SimState): T | undefined;
}

/**
 * State a simulated network keeps beside the shared SimState: one per simulator (a test process may run
 * several), gone with its SimState.
 */
export function perSim<T extends object>(create: () => T): TPerSim<T> {
  const all = new WeakMap<SimState, T>();
  const of = (sim: SimState): T => {
    let state = all.get(sim);
    if (!state) {
      state = create();
      all.set(sim, state);
    }
    return state;
  };
  return Object.assign(of, { peek: (sim: SimState) => all.get(sim) });
}
