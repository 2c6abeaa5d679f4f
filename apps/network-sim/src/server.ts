import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PLATFORMS, type TPlatform } from '@sps/core';
import express, { type Express, type Router } from 'express';
import { simFiguresOf, type TSimFigures } from './metrics-state.sim.js';
import { registerOAuthSims } from './oauth/oauth-networks.sim.js';
import { registerScopeGuards } from './oauth/scope-guard.sim.js';
import { METRICS_SIMS, NETWORK_SIMS } from './registry.js';
import { SimState, type TFault, type SimState as TSimState } from './sim-state.js';
import { registerYoutubeControls } from './youtube.sim.js';

/** Builds the simulator app: each network under `/<platform>`, control routes under `/__sim`. */
export function createNetworkSimApp(sim: TSimState = new SimState()): Express {
  const app = express();
  app.use(express.json({ limit: '10mb' }));
  app.use(express.urlencoded({ extended: true }));
  app.use(express.raw({ type: () => true, limit: '50mb' }));

  app.get('/__sim/requests', (req, res) => {
    const platform = typeof req.query.platform === 'string' ? req.query.platform : undefined;
    res.json({ requests: sim.requests.filter((r) => !platform || r.platform === platform) });
  });
  app.get('/__sim/posts', (req, res) => {
    const platform = typeof req.query.platform === 'string' ? (req.query.platform as TPlatform) : undefined;
    res.json({ posts: sim.postsOf(platform) });
  });
  app.post('/__sim/faults', (req, res) => {
    const body = req.body as Partial<TFault>;
    if (!body.kind || !body.platform) {
      res.status(400).json({ error: 'platform and kind are required' });
      return;
    }
    sim.addFault({ remaining: 1, ...body } as TFault);
    res.status(201).json({ ok: true });
  });
  app.delete('/__sim/faults', (_req, res) => {
    sim.clearFaults();
    res.status(204).end();
  });
  // A post's engagement figures as its network will report them (a test sets and changes them).
  app.put('/__sim/metrics/:platform/:remoteId', (req, res) => {
    simFiguresOf(sim).set(req.params.platform as TPlatform, req.params.remoteId, req.body as TSimFigures);
    res.status(204).end();
  });
  // How long video containers stay IN_PROGRESS on a network: `{ "ms": 120000 }` (0 restores the default).
  app.put('/__sim/processing/:platform', (req, res) => {
    const ms = Number((req.body as { ms?: unknown }).ms);
    if (!Number.isFinite(ms) || ms < 0) {
      res.status(400).json({ error: 'ms must be a number of milliseconds >= 0' });
      return;
    }
    sim.processingMs[req.params.platform as TPlatform] = ms;
    res.status(204).end();
  });
  // What is left of the day's video allowance: `{ "videos": 0, "bytes": 10000000000 }` (`{}` stops counting).
  app.put('/__sim/video-quota/:platform', (req, res) => {
    const body = req.body as { videos?: unknown; bytes?: unknown };
    const platform = req.params.platform as TPlatform;
    if (body.videos === undefined && body.bytes === undefined) {
      delete sim.videoQuota[platform];
      res.status(204).end();
      return;
    }
    const videos = Number(body.videos);
    const bytes = Number(body.bytes);
    if (!Number.isInteger(videos) || videos < 0 || !Number.isInteger(bytes) || bytes < 0) {
      res.status(400).json({ error: 'videos and bytes must be integers >= 0' });
      return;
    }
    sim.videoQuota[platform] = { videos, bytes };
    res.status(204).end();
  });
  app.post('/__sim/reset', (_req, res) => {
    sim.reset();
    res.status(204).end();
  });

  registerYoutubeControls(app, sim);
  // The scopes of the calling token, checked ahead of every endpoint (DESIGN invariant 12).
  registerScopeGuards(app, sim);
  // Authorization servers and identity look-ups, ahead of each network's API routes on the same prefix.
  registerOAuthSims(app, sim);
  for (const platform of PLATFORMS) {
    const register = NETWORK_SIMS[platform];
    if (!register) continue;
    const router: Router = express.Router();
    register(router, sim);
    METRICS_SIMS[platform]?.(router, sim);
    app.use(`/${platform}`, router);
  }
  app.use((req, res) => {
    res
      .status(404)
      .json({ error: 'not_found', message: `The simulator has no route ${req.method} ${req.path}` });
  });
  return app;
}

export interface TRunningSim {
  url: string;
  sim: TSimState;
  /** `NETWORK_<NAME>_BASE_URL` for every network, pointing at this simulator. */
  baseUrls: Record<TPlatform, string>;
  close(): Promise<void>;
}

export async function startNetworkSim(port = 0, host = '127.0.0.1'): Promise<TRunningSim> {
  const sim = new SimState();
  const app = createNetworkSimApp(sim);
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(port, host, () => resolve(s));
  });
  const { port: actual } = server.address() as AddressInfo;
  const url = `http://${host}:${actual}`;
  const baseUrls = Object.fromEntries(PLATFORMS.map((p) => [p, `${url}/${p}`])) as Record<TPlatform, string>;
  return {
    url,
    sim,
    baseUrls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
