import type { TPlatform } from '@sps/core';
import { perSim } from './per-sim.js';
import type { SimState } from './sim-state.js';

/** The figures a test sets for a post, in the service's words; each network shows them in its own fields. */
export interface TSimFigures {
  impressions?: number;
  views?: number;
  likes?: number;
  reposts?: number;
  replies?: number;
  quotes?: number;
  bookmarks?: number;
  clicks?: number;
}

/** Per post (`<platform>:<remoteId>`), the figures its network reports; zeros until a test sets them. */
export class SimFigures {
  private readonly figures = new Map<string, TSimFigures>();

  set(platform: TPlatform, remoteId: string, figures: TSimFigures): void {
    this.figures.set(`${platform}:${remoteId}`, { ...this.get(platform, remoteId), ...figures });
  }

  get(platform: TPlatform, remoteId: string): TSimFigures {
    return this.figures.get(`${platform}:${remoteId}`) ?? {};
  }
}

export const simFiguresOf = perSim(() => new SimFigures());

/** A post's figure, 0 when unset (networks report counts, never "unknown"). */
export const count = (sim: SimState, platform: TPlatform, remoteId: string, field: keyof TSimFigures) =>
  simFiguresOf(sim).get(platform, remoteId)[field] ?? 0;

/** A query parameter given once or repeated, as a list of strings (Express 5 gives either). */
export function listParam(value: unknown): string[] {
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  return typeof value === 'string' ? [value] : [];
}
