import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sealCredentials } from '@sps/core';
import type { TSocialAccountRepository, TStoredToken, TTokenRepository } from '@sps/db';
import { testPrefix } from '@sps/db/testing';
import type { TQueues, TRedis } from '@sps/queue';
import pino from 'pino';
import { connected, testRedisFactory } from '../../api/test/harness.js';
import { createTokenRefresher, type TTokenRefreshConfig } from '../src/token-refresh.js';

const KEY = randomBytes(32);
/** One deployment: every refresher (process) shares the locks under this prefix. */
const prefix = testPrefix('tokenlock');

/** One X account whose token expires within the publish skew, held in memory like the tokens table. */
function storedAccount(id: string): { tokens: TTokenRepository; row: () => TStoredToken } {
  let row: TStoredToken = {
    id,
    accountId: 'a1',
    platform: 'twitter',
    externalId: '42',
    accountName: 'someone',
    instanceUrl: null,
    isActive: true,
    credentialsEncrypted: sealCredentials({ token: 'old-access', refreshToken: 'refresh-1' }, KEY, id),
    credentialsVersion: 1,
    tokenExpiresAt: new Date(Date.now() + 10_000),
    tokenIssuedAt: new Date(Date.now() - 7_000_000),
  };
  const tokens = {
    read: async () => row,
    storeRefreshed: async (_id: string, version: number, next: Partial<TStoredToken>) => {
      if (version !== row.credentialsVersion) return null;
      row = { ...row, ...next, credentialsVersion: version + 1 };
      return row;
    },
    expiringBefore: async () => [],
  } as unknown as TTokenRepository;
  return { tokens, row: () => row };
}

/** An X token endpoint that takes every refresh and never answers (the answer that would be lost). */
async function silentTokenEndpoint() {
  const requests: string[] = [];
  const closed: Promise<void>[] = [];
  const inFlight = { now: 0, most: 0 };
  const server = http.createServer((req, res) => {
    inFlight.now += 1;
    inFlight.most = Math.max(inFlight.most, inFlight.now);
    res.on('close', () => {
      inFlight.now -= 1;
    });
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => requests.push(body));
    closed.push(new Promise((resolve) => res.on('close', () => resolve())));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/2/oauth2/token`,
    requests,
    closed,
    inFlight,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function logLines() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: pino({ level: 'info' }, stream), lines };
}

describe('token refresh: the lock outlives the refresh, and configuration problems are transient', () => {
  let redis: TRedis;
  let endpoint: Awaited<ReturnType<typeof silentTokenEndpoint>>;
  const disconnected: string[] = [];
  const socialAccounts = {
    disconnect: async (_accountId: string, id: string) => {
      disconnected.push(id);
      return true;
    },
  } as unknown as TSocialAccountRepository;

  beforeAll(async () => {
    // REDIS_URL, or the cluster of REDIS_CLUSTER_NODES.
    redis = await connected(testRedisFactory().producer());
    endpoint = await silentTokenEndpoint();
  });
  afterAll(async () => {
    await endpoint.close();
    await redis.quit();
  });

  const refresher = (
    tokens: TTokenRepository,
    config: Partial<TTokenRefreshConfig>,
    logger = pino({ level: 'silent' }),
  ) =>
    createTokenRefresher({
      redis,
      tokens,
      socialAccounts,
      queues: {} as TQueues,
      encryptionKey: KEY,
      logger,
      config: {
        apps: { twitter: { clientId: 'c', clientSecret: 's', tokenUrl: endpoint.url } },
        baseUrls: {},
        prefix,
        timeoutMs: 800,
        ...config,
      },
    });

  it('a refresh that runs past a short configured lock is still alone: one request, aborted at its bound', async () => {
    const { tokens } = storedAccount('sa-lock');
    // Two publisher processes; the operator set a lock far shorter than the refresh's own bound (800 ms).
    const first = refresher(tokens, { lockMs: 100, lockWaitMs: 1_500 }).forPublish(
      'sa-lock',
      new Date().toISOString(),
    );
    // The first holds the lock and waits on the token endpoint; the second comes after the short lock.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const second = refresher(tokens, { lockMs: 100, lockWaitMs: 300 }).forPublish(
      'sa-lock',
      new Date().toISOString(),
    );
    const outcomes = await Promise.all([first, second]);
    // The single-use refresh token was never presented twice at once: whichever came second waited.
    expect(endpoint.inFlight.most).toBe(1);
    for (const outcome of outcomes) expect(outcome).toMatchObject({ ok: false, reason: 'transient' });
    expect(outcomes.map((o) => (o && !o.ok ? o.message : ''))).toContainEqual(
      expect.stringContaining('still running'),
    );
    // The request was abandoned with its connection, not left running behind a rejected promise.
    await Promise.all(endpoint.closed);
    expect(endpoint.inFlight.now).toBe(0);
    expect(disconnected).toEqual([]);
  });

  it('a publisher without the OAuth app variables keeps the account and says which variables are missing', async () => {
    const { tokens, row } = storedAccount('sa-unconfigured');
    const { logger, lines } = logLines();
    const before = endpoint.requests.length;
    const outcome = await refresher(tokens, { apps: {} }, logger).forPublish(
      'sa-unconfigured',
      new Date().toISOString(),
    );
    expect(outcome).toMatchObject({ ok: false, reason: 'transient' });
    expect(outcome && !outcome.ok ? outcome.message : '').toContain(
      'OAUTH_TWITTER_CLIENT_ID and OAUTH_TWITTER_CLIENT_SECRET',
    );
    const warning = lines.find((l) => String(l.msg).startsWith('token refresh impossible here'));
    expect(warning).toMatchObject({
      level: 40,
      platform: 'twitter',
      missing: ['OAUTH_TWITTER_CLIENT_ID', 'OAUTH_TWITTER_CLIENT_SECRET'],
    });
    expect(disconnected).toEqual([]);
    expect(row().isActive).toBe(true);
    expect(endpoint.requests.length).toBe(before);
    // The refresh job retries it (a transient outcome throws for BullMQ's backoff) rather than disconnecting.
    const job = await refresher(tokens, { apps: {} }).refreshJob('sa-unconfigured');
    expect(job).toMatchObject({ ok: false, reason: 'transient' });
  });
});
