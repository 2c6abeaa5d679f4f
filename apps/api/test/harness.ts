import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PLATFORMS, secretBox, type TPlatform } from '@sps/core';
import { createDb, createSocialAccountRepository, type TDb, type TPlan } from '@sps/db';
import { createTestAccount, createTestDatabase, type TTestAccount, testPrefix } from '@sps/db/testing';
import { simOAuthEnv, startNetworkSim, type TRunningSim } from '@sps/network-sim';
import { createConnectors } from '@sps/networks';
import {
  createQueues,
  createRedisFactory,
  deleteKeysMatching,
  type TQueues,
  type TRedis,
  type TRedisFactory,
} from '@sps/queue';
import type { TStorage } from '@sps/storage';
import type { Express } from 'express';
import { parseReadBudgetOverrides } from '../../publisher/src/metrics-budget.js';
import { ownMediaSource } from '../../publisher/src/own-media.js';
import type { TLaneOptions } from '../../publisher/src/publish-lanes.js';
import { createPublisher, type TPublisher } from '../../publisher/src/publisher.js';
import type { TWebhooksOptions } from '../../webhooks/src/context.js';
import { createMailer } from '../../webhooks/src/mailer.js';
import { createWebhooksWorker, type TWebhooksWorker } from '../../webhooks/src/webhooks.js';
import { createApi } from '../src/app.js';
import type { LiveEvents } from '../src/dashboard/live-events.js';
import { loadEnv, type TApiEnv } from '../src/env.js';
import { createLogger } from '../src/logger.js';
import { watchStep } from './setup-watch.js';

export interface TTestApi {
  app: Express;
  /** The API's dashboard live streams (`/dashboard/api/events`). */
  live: LiveEvents;
  db: TDb;
  env: TApiEnv;
  /** The API's Redis connection (one server, or the cluster when REDIS_CLUSTER_NODES is set). */
  redis: TRedis;
  /** Makes further connections to the same Redis or cluster. */
  redisFactory: TRedisFactory;
  /** The API's media store (MEDIA_STORAGE=fs in a temporary MEDIA_DIR unless the test says otherwise). */
  storage: TStorage;
  queues: TQueues;
  /** Present with `{ publisher: true }` or `{ sim: true }`: the network simulator every connector points at. */
  sim?: TRunningSim;
  /** Present with `{ publisher: true }`: an in-process publisher worker. */
  publisher?: TPublisher;
  /** A new account with one API key. */
  account(plan?: TPlan): Promise<TTestAccount>;
  /** Connects a social account the way `admin social connect` does (token sealed, event emitted). */
  connect(
    accountId: string,
    platform: TPlatform,
    name?: string,
    extra?: { externalId?: string; instanceUrl?: string },
  ): Promise<string>;
  /** Starts a (new) publisher after `stopPublisher`, as a restarted process would. */
  startPublisher(): Promise<TPublisher>;
  /** Present with `{ webhooks: {...} }`: an in-process webhooks worker (dispatcher, deliveries, reconciler). */
  webhooks?: TWebhooksWorker;
  /** Starts a (new) webhooks worker, as a restarted process would. */
  startWebhooks(): Promise<TWebhooksWorker>;
  stopWebhooks(): Promise<void>;
  stopPublisher(): Promise<void>;
  close(): Promise<void>;
}

export interface TTestApiOptions {
  env?: Record<string, string>;
  /** Run the publisher worker in-process against the network simulator. */
  publisher?: boolean;
  /** Start the network simulator (and point the connectors at it) without an in-process publisher. */
  sim?: boolean;
  /** The in-process publisher's reconciler: how long before a `publishing` post counts as stuck (default 2 min). */
  stuckAfterMs?: number;
  reconcileEveryMs?: number;
  /** METRICS_COLLECT_AFTER of the in-process publisher, in ms (default: the production 1h,6h,...). */
  metricsCollectAfterMs?: number[];
  /** METRICS_READ_BUDGET of the in-process publisher, e.g. `discord=3/2s` (default: the documented limits). */
  metricsReadBudget?: string;
  publisherConcurrency?: number;
  /** Run the webhooks worker in-process (defaults: retries 100..500ms, private URLs allowed, dispatch every 100ms). */
  webhooks?: Partial<TWebhooksOptions> & {
    smtpUrl?: string;
    dispatchEveryMs?: number;
    lockDurationMs?: number;
  };
  backoffBaseMs?: number;
  /** READBACK_SETTLE of the in-process publisher (default 300 ms: the simulator stores posts at once). */
  readbackSettleMs?: number;
  /** How long the in-process publisher trusts a network's idempotency key after a send (default: real lifetimes). */
  keyTrustMs?: Partial<Record<TPlatform, number>>;
  networkTimeoutMs?: number;
  /** How long the in-process publisher waits for another holder of an account's token-refresh lock (default 20 s). */
  tokenLockWaitMs?: number;
  /** Fair lanes of the in-process publisher (publish-lanes.ts); default: none. */
  lanes?: TLaneOptions;
  /** Media processing checks of the in-process publisher (default: every 10 ms, at most 10 s of wall time). */
  processingWait?: { intervalMs: number; maxWaitMs: number };
  /** MEDIA_ALLOW_PRIVATE_URLS of the in-process publisher (default true: test media servers are on loopback). */
  mediaAllowPrivate?: boolean;
  /** Piece size of chunked media uploads (X, YouTube, TikTok, ...): small, so small test files take many pieces. */
  uploadChunkBytes?: number;
  /** Wraps the API's database client (not the workers'), e.g. to make it fail on demand. */
  wrapApiDb?: (db: TDb) => TDb;
}

/** Default external ids the connectors of some networks need. */
const EXTERNAL_IDS: Partial<Record<TPlatform, string>> = {
  facebook: 'page-1',
  instagram: 'ig-1',
  discord: 'channel-1',
  slack: 'C123',
  telegram: '-100123',
  linkedin: 'urn:li:person:abc',
  threads: 'threads-user-1',
  bluesky: 'user.bsky.social',
};

/** The whole API app in-process against its own PostgreSQL database and Redis key prefix. */
export async function startTestApi(
  options: TTestApiOptions | Record<string, string> = {},
): Promise<TTestApi> {
  // Older callers pass env overrides directly.
  const opts: TTestApiOptions =
    'env' in options || 'publisher' in options || 'sim' in options || 'wrapApiDb' in options
      ? (options as TTestApiOptions)
      : { env: options as Record<string, string> };
  const database = await watchStep('createTestDatabase', createTestDatabase());
  const mediaDir = await watchStep('mkdtemp', mkdtemp(join(tmpdir(), 'sps-media-')));
  const sim = opts.publisher || opts.sim ? await watchStep('startNetworkSim', startNetworkSim()) : undefined;
  const env = loadEnv({
    DATABASE_URL: database.url,
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    // `.ci/run` runs some files again on a Redis Cluster by setting this.
    REDIS_CLUSTER_NODES: process.env.REDIS_CLUSTER_NODES ?? '',
    QUEUE_PREFIX: testPrefix('api'),
    LOG_LEVEL: 'silent',
    // Every request of a test file comes from 127.0.0.1: Variant A's per-IP limits would trip files that
    // send hundreds of requests. rate-limits-a.test.ts sets the production numbers back explicitly.
    RATE_LIMIT_A_PER_MINUTE: '100000',
    RATE_LIMIT_A_PUBLISH_PER_HOUR: '100000',
    // Likewise for wrong keys: auth tests send many on purpose. abuse-auth.test.ts sets a real limit.
    AUTH_FAILURES_PER_MINUTE: '100000',
    // The tests' connect flows send the browser back to https://app.example (a redirect_uri must be on an
    // allowed origin); oauth-redirects.test.ts checks the refusal of others.
    CONNECT_REDIRECT_ORIGINS: 'https://app.example',
    NETWORK_AVAILABILITY: 'twitter=live,threads=live,bluesky=testing,linkedin=testing,mastodon=testing',
    // Uploaded media of this test file only (MEDIA_STORAGE=fs), removed by close().
    MEDIA_DIR: mediaDir,
    ...(sim
      ? {
          ...Object.fromEntries(
            PLATFORMS.map((p) => [`NETWORK_${p.toUpperCase()}_BASE_URL`, sim.baseUrls[p]]),
          ),
          // The simulator's authorization servers and their client (OAuth connects and token refreshes).
          ...simOAuthEnv(sim.url),
        }
      : {}),
    ...opts.env,
  });
  const db = createDb(env.DATABASE_URL, { poolMax: 6 });
  const redisFactory = testRedisFactory(env);
  // The API's producer connection fails fast while it is not connected: wait until it is.
  const redis = await watchStep('Redis producer ready', connected(redisFactory.producer()));
  const subscriber = redisFactory.subscriber();
  const workerConnection = redisFactory.worker();
  const queues = createQueues(redis, env.QUEUE_PREFIX);
  // TEST_LOG_LEVEL=debug shows what the in-process API and publisher log, to debug a failing test.
  const logger = createLogger((process.env.TEST_LOG_LEVEL as 'silent' | undefined) ?? 'silent', 'api-test');
  const apiDb = opts.wrapApiDb ? opts.wrapApiDb(db) : db;
  const { app, verifier, live, storage } = createApi({ env, db: apiDb, redis, queues, logger });
  await watchStep('key revocation SUBSCRIBE', verifier.listen(subscriber, env.QUEUE_PREFIX));
  const socialAccounts = createSocialAccountRepository(db);

  const startPublisher = () =>
    createPublisher({
      db,
      connection: workerConnection,
      queues,
      queuePrefix: env.QUEUE_PREFIX,
      connectors: createConnectors({
        baseUrls: env.networkBaseUrls,
        ...(sim ? { blueskyVideoUrl: `${sim.baseUrls.bluesky}/video` } : {}),
        ...(env.oauthApps.facebook?.clientId
          ? { appIds: { facebook: env.oauthApps.facebook.clientId } }
          : {}),
        // The simulator and test media servers listen on loopback (MEDIA_ALLOW_PRIVATE_URLS=true).
        media: {
          // Media library URLs are read from the API's media store, as the publisher process does.
          ownMedia: ownMediaSource(env.publicUrl, storage),
          allowPrivate: opts.mediaAllowPrivate ?? true,
          timeoutMs: 5_000,
          videoTimeoutMs: 10_000,
        },
        timeoutMs: opts.networkTimeoutMs ?? 2000,
        ...(opts.uploadChunkBytes ? { uploadChunkBytes: opts.uploadChunkBytes } : {}),
        // The simulator finishes media processing at once; production waits the networks' documented cadence.
        processingWait: opts.processingWait ?? { intervalMs: 10, maxWaitMs: 10_000 },
      }),
      logger,
      encryptionKey: env.encryptionKey,
      concurrency: opts.publisherConcurrency ?? 20,
      backoffBaseMs: opts.backoffBaseMs ?? 50,
      readbackSettleMs: opts.readbackSettleMs ?? 300,
      networkTimeoutMs: opts.networkTimeoutMs ?? 2000,
      ...(opts.keyTrustMs ? { keyTrustMs: opts.keyTrustMs } : {}),
      reconcileEveryMs: opts.reconcileEveryMs ?? 60_000,
      twitterAllowance: env.twitterAllowance,
      mediaSweep: { storage, retentionMs: env.MEDIA_RETENTION },
      oauth: {
        apps: env.oauthApps,
        baseUrls: env.networkBaseUrls,
        timeoutMs: opts.networkTimeoutMs ?? 2000,
        ...(opts.tokenLockWaitMs ? { lockWaitMs: opts.tokenLockWaitMs } : {}),
      },
      ...(opts.stuckAfterMs !== undefined ? { stuckAfterMs: opts.stuckAfterMs } : {}),
      ...(opts.lanes ? { lanes: opts.lanes } : {}),
      ...(opts.metricsCollectAfterMs ? { engagement: { collectAfterMs: opts.metricsCollectAfterMs } } : {}),
      ...(opts.metricsReadBudget
        ? { readBudget: { overrides: parseReadBudgetOverrides(opts.metricsReadBudget) } }
        : {}),
    });

  const startWebhooks = () => {
    const o = opts.webhooks ?? {};
    return createWebhooksWorker({
      db,
      connection: workerConnection,
      queues,
      queuePrefix: env.QUEUE_PREFIX,
      logger,
      mailer: createMailer({ smtpUrl: o.smtpUrl, from: 'sps-test@localhost', logger }),
      options: {
        encryptionKey: env.encryptionKey,
        retryDelaysMs: o.retryDelaysMs ?? [100, 200, 300, 400, 500],
        timeoutMs: o.timeoutMs ?? 2000,
        allowPrivateUrls: o.allowPrivateUrls ?? true,
        deactivateAfter: o.deactivateAfter ?? 10,
        concurrency: o.concurrency ?? 20,
        ...(o.perWebhookConcurrency ? { perWebhookConcurrency: o.perWebhookConcurrency } : {}),
        ...(o.perAccountConcurrency ? { perAccountConcurrency: o.perAccountConcurrency } : {}),
        certificateAuthority: o.certificateAuthority,
      },
      dispatchEveryMs: o.dispatchEveryMs ?? 100,
      reconcileEveryMs: 60_000,
      lockDurationMs: o.lockDurationMs ?? 30_000,
    });
  };

  const api: TTestApi = {
    app,
    live,
    db,
    env,
    storage,
    redis,
    redisFactory,
    queues,
    ...(sim ? { sim } : {}),
    account: (plan = 'pro') => watchStep(`account(${plan})`, createTestAccount(db, plan)),
    async connect(accountId, platform, name = `${platform}-user`, extra = {}) {
      const externalId = extra.externalId ?? EXTERNAL_IDS[platform] ?? null;
      const account = await watchStep(
        `connect(${platform})`,
        socialAccounts.connect({
          accountId,
          platform,
          accountName: name,
          externalId,
          instanceUrl: extra.instanceUrl ?? (platform === 'mastodon' && sim ? sim.baseUrls.mastodon : null),
          // Telegram bot tokens have the shape `<bot id>:<secret>`; the simulator checks it like the real API.
          credentialsEncrypted: secretBox.sealV1(
            JSON.stringify({ token: platform === 'telegram' ? `123456:token-${name}` : `token-${name}` }),
            env.encryptionKey,
          ),
        }),
      );
      return account.id;
    },
    async startPublisher() {
      api.publisher = await startPublisher();
      return api.publisher;
    },
    async stopPublisher() {
      await api.publisher?.close();
      delete api.publisher;
    },
    async startWebhooks() {
      api.webhooks = await startWebhooks();
      return api.webhooks;
    },
    async stopWebhooks() {
      await api.webhooks?.close();
      delete api.webhooks;
    },
    async close() {
      await live.close();
      await api.webhooks?.close();
      await api.publisher?.close();
      await queues.close();
      // Leave nothing of this file's prefix in Redis.
      await deleteKeysMatching(redis, `*${env.QUEUE_PREFIX}*`);
      await Promise.allSettled([redis.quit(), subscriber.quit(), workerConnection.quit()]);
      await db.$disconnect();
      await sim?.close();
      await rm(mediaDir, { recursive: true, force: true });
      await database.drop();
    },
  };
  if (opts.publisher) await api.startPublisher();
  if (opts.webhooks) await api.startWebhooks();
  return api;
}

/**
 * The Redis the tests use: REDIS_URL, or the Redis Cluster of REDIS_CLUSTER_NODES (`.ci/run` runs some files
 * a second time on a local cluster). Test code may read the environment; production code never does here.
 */
export function testRedisFactory(
  env: Pick<TApiEnv, 'REDIS_URL' | 'REDIS_CLUSTER_NODES'> = loadEnv({
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    REDIS_CLUSTER_NODES: process.env.REDIS_CLUSTER_NODES ?? '',
    LOG_LEVEL: 'silent',
  }),
): TRedisFactory {
  return createRedisFactory({ url: env.REDIS_URL, clusterNodes: env.REDIS_CLUSTER_NODES });
}

/** Resolves with the connection once it is ready (a cluster, once it knows its slots). */
export async function connected(redis: TRedis): Promise<TRedis> {
  if (redis.status !== 'ready')
    await new Promise<void>((resolve, reject) => {
      redis.once('ready', () => resolve());
      redis.once('end', () => reject(new Error('Redis connection ended before it was ready')));
    });
  return redis;
}

export const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });
