import type { TPlatform } from '@sps/core';
import type { Router } from 'express';
import { registerBlueskySim } from './bluesky.sim.js';
import { registerBlueskyMetricsSim } from './bluesky-metrics.sim.js';
import { registerDiscordMetricsSim, registerSlackMetricsSim } from './chat-metrics.sim.js';
// group-2 imports
import { registerDiscordSim } from './discord.sim.js';
import { registerFacebookSim } from './facebook.sim.js';
import { registerInstagramSim } from './instagram.sim.js';
// group-1 imports
import { registerLinkedInSim } from './linkedin.sim.js';
import { registerLinkedInMetricsSim } from './linkedin-metrics.sim.js';
import { registerMastodonSim } from './mastodon.sim.js';
import { registerMastodonMetricsSim } from './mastodon-metrics.sim.js';
import { registerFacebookMetricsSim, registerInstagramMetricsSim } from './meta-metrics.sim.js';
import type { SimState } from './sim-state.js';
import { registerSlackSim } from './slack.sim.js';
import { registerTelegramSim } from './telegram.sim.js';
import { registerThreadsSim } from './threads.sim.js';
import { registerThreadsMetricsSim } from './threads-metrics.sim.js';
import { registerTiktokSim } from './tiktok.sim.js';
import { registerTiktokMetricsSim } from './tiktok-metrics.sim.js';
import { registerTwitterSim } from './twitter.sim.js';
import { registerTwitterMetricsSim } from './twitter-metrics.sim.js';
import { registerYoutubeSim } from './youtube.sim.js';
import { registerYoutubeMetricsSim } from './youtube-metrics.sim.js';

export type TRegisterSim = (router: Router, sim: SimState) => void;

/**
 * Each network's simulated endpoints, mounted under `/<platform>`. A network's file
 * (`<platform>.sim.ts`) exports `register<Platform>Sim` and is listed here.
 */
export const NETWORK_SIMS: Partial<Record<TPlatform, TRegisterSim>> = {
  // group-1 sims
  linkedin: registerLinkedInSim,
  facebook: registerFacebookSim,
  threads: registerThreadsSim,
  bluesky: registerBlueskySim,
  mastodon: registerMastodonSim,
  twitter: registerTwitterSim,
  // group-2 sims
  discord: registerDiscordSim,
  instagram: registerInstagramSim,
  slack: registerSlackSim,
  telegram: registerTelegramSim,
  tiktok: registerTiktokSim,
  youtube: registerYoutubeSim,
};

/** Each network's metrics endpoints (`<platform>-metrics.sim.ts`), mounted after its other routes. */
export const METRICS_SIMS: Partial<Record<TPlatform, TRegisterSim>> = {
  twitter: registerTwitterMetricsSim,
  bluesky: registerBlueskyMetricsSim,
  mastodon: registerMastodonMetricsSim,
  youtube: registerYoutubeMetricsSim,
  threads: registerThreadsMetricsSim,
  tiktok: registerTiktokMetricsSim,
  instagram: registerInstagramMetricsSim,
  facebook: registerFacebookMetricsSim,
  linkedin: registerLinkedInMetricsSim,
  discord: registerDiscordMetricsSim,
  slack: registerSlackMetricsSim,
};
