// What `npm start -- --demo` adds: the simulator's addresses for every network, and a demo account made with
// the admin CLI (the same commands an operator runs), with one connected account per network.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
// Built by `npm start` before this runs: the simulator's OAuth client and authorization endpoints.
import { simOAuthEnv } from '../apps/network-sim/dist/oauth/sim-oauth-env.js';

const run = promisify(execFile);
const PLATFORMS = [
  'twitter',
  'threads',
  'bluesky',
  'linkedin',
  'mastodon',
  'instagram',
  'facebook',
  'tiktok',
  'youtube',
  'discord',
  'slack',
  'telegram',
];
// The network-side ids the simulator's endpoints expect (page, channel, chat, person URN, DID or handle).
const EXTERNAL_IDS = {
  facebook: 'page-1',
  instagram: 'ig-1',
  discord: 'channel-1',
  slack: 'C123',
  telegram: '-100123',
  linkedin: 'urn:li:person:demo',
  threads: 'threads-user-1',
  bluesky: 'demo.bsky.social',
};

export function demoEnv() {
  const port = process.env.SIM_PORT ?? '4010';
  const sim = `http://127.0.0.1:${port}`;
  return {
    SIM_PORT: port,
    // The simulator serves media on loopback; outside the demo such URLs are refused.
    MEDIA_ALLOW_PRIVATE_URLS: 'true',
    ...Object.fromEntries(PLATFORMS.map((p) => [`NETWORK_${p.toUpperCase()}_BASE_URL`, `${sim}/${p}`])),
    NETWORK_BLUESKY_VIDEO_URL: `${sim}/bluesky/video`,
    // POST /v1/accounts/connect works too: the simulated authorization pages can be clicked through.
    ...simOAuthEnv(sim),
  };
}

export async function waitForHttp(url, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${url} did not answer within ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
}

async function admin(env, args) {
  const { stdout } = await run(process.execPath, ['apps/admin/dist/main.js', ...args], { env });
  return JSON.parse(stdout);
}

export async function createDemo(env) {
  // A new demo account per run, with its own e-mail, so a sign-in never has to choose between old ones.
  const tag = randomBytes(4).toString('hex');
  const email = `demo-${tag}@example.test`;
  const password = `demo-password-${randomBytes(6).toString('hex')}`;
  const { accountId, apiKey } = await admin(env, [
    'account',
    'create',
    '--name',
    'Demo',
    '--email',
    email,
    '--plan',
    'pro',
    '--password',
    password,
  ]);
  const sim = `http://127.0.0.1:${env.SIM_PORT}`;
  for (const platform of PLATFORMS) {
    const externalId = EXTERNAL_IDS[platform];
    await admin(env, [
      'social',
      'connect',
      '--account',
      accountId,
      '--platform',
      platform,
      '--name',
      `demo_${platform}`,
      '--token',
      platform === 'telegram' ? '123456:demo-token' : `demo-token-${platform}`,
      ...(externalId ? [`--external-id=${externalId}`] : []),
      ...(platform === 'mastodon' ? ['--instance', `${sim}/mastodon`] : []),
    ]);
  }
  return { accountId, apiKey, email, password, platforms: PLATFORMS };
}
