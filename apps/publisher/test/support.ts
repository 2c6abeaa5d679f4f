import { type ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { PLATFORMS, type TPlatform } from '@sps/core';
import type { TRunningSim } from '@sps/network-sim';
import request from 'supertest';
import { bearer, type TTestApi } from '../../api/test/harness.js';

// Helpers of the publisher's reliability tests: the real publisher process, waits, simulator counts.

const ROOT = resolve(import.meta.dirname, '../../..');
const MAIN = resolve(ROOT, 'apps/publisher/dist/main.js');

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls `check` every `everyMs` until it returns true; throws with `what` after `timeoutMs`. */
export async function waitUntil(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs: number,
  everyMs = 50,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

export interface TPublisherProcess {
  child: ChildProcess;
  /** Resolves when the process exits, with its exit code (null when killed by a signal) and signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** What the process wrote to stderr (crash traces; logs are silent). */
  stderr(): string;
  /** SIGTERM, then SIGKILL when it has not exited after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Starts `node apps/publisher/dist/main.js` against the harness's database, Redis prefix and
 * simulator, the way the service runs it. ENCRYPTION_KEY stays unset: the development key is the
 * one the harness seals tokens with.
 */
export function startPublisherProcess(
  api: TTestApi,
  sim: TRunningSim,
  extra: Record<string, string> = {},
): TPublisherProcess {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.ENCRYPTION_KEY;
  Object.assign(env, {
    NODE_ENV: 'test',
    DATABASE_URL: api.env.DATABASE_URL,
    REDIS_URL: api.env.REDIS_URL,
    QUEUE_PREFIX: api.env.QUEUE_PREFIX,
    LOG_LEVEL: 'silent',
    DB_POOL_MAX: '6',
    PUBLISH_BACKOFF_BASE: '100ms',
    RECONCILE_EVERY: '1s',
    NETWORK_TIMEOUT: '2s',
    // The simulator stores a post before it answers: a read-back that finds nothing a second later is trusted.
    READBACK_SETTLE: '1s',
    // The simulator and test media servers listen on loopback.
    MEDIA_ALLOW_PRIVATE_URLS: 'true',
    // A killed process's active jobs come back after the lock lapses: 2 s instead of BullMQ's 30 s.
    JOB_LOCK_DURATION: '2s',
    // Tests run in parallel: no fixed operator port.
    METRICS_PORT: '0',
    ...Object.fromEntries(
      PLATFORMS.map((p: TPlatform) => [`NETWORK_${p.toUpperCase()}_BASE_URL`, sim.baseUrls[p]]),
    ),
    ...extra,
  });
  const child = spawn(process.execPath, [MAIN], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => {
    child.once('exit', (code, signal) => done({ code, signal }));
  });
  return {
    child,
    exited,
    stderr: () => stderr,
    async stop(graceMs = 15_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** How many times each (network, text) reached the simulator. */
export function simCounts(sim: TRunningSim, platforms: readonly TPlatform[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const platform of platforms) {
    for (const post of sim.sim.postsOf(platform)) {
      const key = `${platform}|${post.text}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
  }
  return counts;
}

/** Post ids by status among `ids`. */
export async function statusCounts(api: TTestApi, ids: readonly string[]): Promise<Record<string, number>> {
  const rows = await api.db.post.groupBy({
    by: ['status'],
    where: { id: { in: [...ids] } },
    _count: { _all: true },
  });
  return Object.fromEntries(rows.map((r) => [r.status, r._count._all]));
}

export async function finalCount(api: TTestApi, ids: readonly string[]): Promise<number> {
  const counts = await statusCounts(api, ids);
  return (counts.published ?? 0) + (counts.failed ?? 0);
}

/** A 1x1 PNG put in the account's media library; its URL, which connectors that download media can fetch. */
export async function libraryImage(api: TTestApi, apiKey: string, name = 'image.png'): Promise<string> {
  const image = Buffer.from(
    '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a0b3a5a50000000049454e44ae426082',
    'hex',
  );
  const uploaded = await request(api.app).post('/v1/media').set(bearer(apiKey)).attach('file', image, name);
  if (uploaded.status !== 201) throw new Error(`media upload answered ${uploaded.status}`);
  return uploaded.body.url as string;
}
