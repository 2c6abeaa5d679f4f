import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DEVELOPMENT_KEY_WARNING, isLoopbackUrl } from '@sps/core';
import { createDb, type TDb } from '@sps/db';
import { createTestAccount, createTestDatabase, type TTestDatabase, testPrefix } from '@sps/db/testing';
import { loadEnv as loadApiEnv } from '../apps/api/src/env.js';
import { freePort, ROOT, startNode, type TChild, waitUntil } from './processes.js';

// Operator surfaces and the development encryption key (issue #15), on the built processes: the workers'
// metrics ports listen on loopback unless told otherwise, and a process without ENCRYPTION_KEY says so
// loudly, or refuses to start when PUBLIC_URL is reachable from elsewhere. (/metrics of the API behind
// ADMIN_TOKEN: apps/api/test/ops.test.ts.)

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const run = promisify(execFile);

/** The local address a TCP port listens on, from the kernel's own table (/proc/net/tcp and tcp6). */
function listeningAddresses(port: number): string[] {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  const found: string[] = [];
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(file, 'utf8').split('\n').slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (!local || state !== '0A') continue; // 0A: LISTEN
      const [address, portHex] = local.split(':');
      if (portHex !== hexPort || !address) continue;
      if (address.length === 8) {
        // IPv4, little-endian bytes.
        found.push(
          (address.match(/../g) ?? [])
            .reverse()
            .map((b) => Number.parseInt(b, 16))
            .join('.'),
        );
      } else
        found.push(
          /^0+$/.test(address) ? '::' : address === '00000000000000000000000001000000' ? '::1' : address,
        );
    }
  }
  return found;
}

describe('operator surfaces and the development key on the real processes', () => {
  const prefix = testPrefix('abuseops');
  const children: TChild[] = [];
  let database: TTestDatabase | undefined;
  let db: TDb | undefined;

  const base = () => ({
    DATABASE_URL: database!.url,
    REDIS_URL,
    QUEUE_PREFIX: prefix,
    LOG_LEVEL: 'warn',
  });
  const track = (child: TChild) => {
    children.push(child);
    return child;
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    db = createDb(database.url, { poolMax: 1 });
  });
  afterAll(async () => {
    await Promise.allSettled(children.map((c) => c.stop(5_000)));
    await db?.$disconnect().catch(() => undefined);
    await database?.drop().catch(() => undefined);
  }, 60_000);

  it.each([
    ['publisher', 'apps/publisher/dist/main.js'],
    ['webhooks', 'apps/webhooks/dist/main.js'],
  ])(
    'the %s metrics port listens on loopback by default, elsewhere only with METRICS_HOST',
    async (name, entry) => {
      const port = await freePort();
      const worker = track(
        startNode(name, entry, {
          ...base(),
          ENCRYPTION_KEY: randomBytes(32).toString('hex'),
          METRICS_PORT: String(port),
        }),
      );
      await waitUntil(`${name} metrics`, async () => listeningAddresses(port).length > 0, 60_000);
      expect(listeningAddresses(port)).toEqual(['127.0.0.1']);
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
      await worker.stop();

      const open = await freePort();
      const opened = track(
        startNode(`${name}-open`, entry, {
          ...base(),
          ENCRYPTION_KEY: randomBytes(32).toString('hex'),
          METRICS_PORT: String(open),
          METRICS_HOST: '0.0.0.0',
        }),
      );
      await waitUntil(
        `${name} metrics on every interface`,
        async () => listeningAddresses(open).length > 0,
        60_000,
      );
      expect(listeningAddresses(open)).toEqual(['0.0.0.0']);
      await opened.stop();
    },
    120_000,
  );

  it('without ENCRYPTION_KEY and a public PUBLIC_URL, every process refuses to start', async () => {
    for (const entry of [
      'apps/api/dist/main.js',
      'apps/publisher/dist/main.js',
      'apps/webhooks/dist/main.js',
    ]) {
      const child = track(
        startNode(entry, entry, {
          ...base(),
          PUBLIC_URL: 'https://posts.example.com',
          PORT: String(await freePort()),
          METRICS_PORT: '0',
        }),
      );
      const { code } = await child.exited;
      expect(code).not.toBe(0);
      expect(child.output()).toContain(
        'ENCRYPTION_KEY is required when PUBLIC_URL (https://posts.example.com) is not a loopback address',
      );
    }
    // The admin CLI too (it seals tokens with `social connect`).
    const admin = await run(process.execPath, [`${ROOT}/apps/admin/dist/main.js`, 'account', 'create'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', ...base(), PUBLIC_URL: 'https://posts.example.com' },
    }).catch((error: { code: number; stderr: string }) => error);
    expect((admin as { code: number }).code).not.toBe(0);
    expect((admin as { stderr: string }).stderr).toContain('ENCRYPTION_KEY is required when PUBLIC_URL');
  }, 120_000);

  it('without ENCRYPTION_KEY on loopback, a process starts and warns loudly; the admin CLI says so in its answer', async () => {
    const port = await freePort();
    const api = track(
      startNode('api-dev-key', 'apps/api/dist/main.js', {
        ...base(),
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'silent',
      }),
    );
    await waitUntil(
      'api up',
      async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200,
      60_000,
    );
    // Even with LOG_LEVEL=silent.
    expect(api.output()).toContain(`*** WARNING: ${DEVELOPMENT_KEY_WARNING} ***`);
    await api.stop();

    const { accountId } = await createTestAccount(db!, 'pro', 'dev key');
    const { stdout } = await run(
      process.execPath,
      [
        `${ROOT}/apps/admin/dist/main.js`,
        'social',
        'connect',
        '--account',
        accountId,
        '--platform',
        'twitter',
        '--name',
        'dev',
        '--token',
        'token-dev',
      ],
      { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...base() } },
    );
    expect(JSON.parse(stdout)).toEqual({
      socialAccountId: expect.any(String),
      warning: DEVELOPMENT_KEY_WARNING,
    });
  }, 120_000);

  it('loopback means localhost, 127.0.0.0/8 and ::1; API_KEY_CACHE_TTL is at most 60 s', () => {
    for (const url of [
      'http://localhost:3000',
      'http://app.localhost',
      'http://127.0.0.1:3000',
      'http://127.8.9.10',
      'http://[::1]:3000',
    ]) {
      expect(isLoopbackUrl(url)).toBe(true);
    }
    for (const url of [
      'https://posts.example.com',
      'http://10.0.0.5',
      'http://[::2]',
      'http://localhost.example.com',
      'not a url',
    ]) {
      expect(isLoopbackUrl(url)).toBe(false);
    }
    expect(() => loadApiEnv({ API_KEY_CACHE_TTL: '61s' })).toThrow(/API_KEY_CACHE_TTL: must be at most 60s/);
    expect(loadApiEnv({ API_KEY_CACHE_TTL: '60s' }).API_KEY_CACHE_TTL).toBe(60_000);
  });
});
