import {
  generateApiKey,
  hashPassword,
  isPlatform,
  passwordProblem,
  presentDeliveryB,
  sealCredentials,
  UUID_PATTERN,
} from '@sps/core';
import {
  createAccountRepository,
  createOwnerRepository,
  createSocialAccountRepository,
  createWebhookRepository,
  PLANS,
  type TDb,
  type TPlan,
} from '@sps/db';
import { createProducerConnection, createQueues, enqueueWebhookDelivery } from '@sps/queue';
import type { TAdminEnv } from './env.js';

export class UsageError extends Error {}

export type TOptions = Record<string, string | undefined>;

function required(options: TOptions, name: string): string {
  const value = options[name];
  if (!value) throw new UsageError(`--${name} is required`);
  return value;
}

function plan(value: string): TPlan {
  if (!(PLANS as readonly string[]).includes(value))
    throw new UsageError(`--plan must be one of ${PLANS.join(', ')}`);
  return value as TPlan;
}

/** The owner's dashboard password, checked before anything is written. */
async function passwordHashOf(options: TOptions): Promise<string | null> {
  const password = options['password'];
  if (password === undefined) return null;
  const problem = passwordProblem(password);
  if (problem) throw new UsageError(`--password ${problem}`);
  return hashPassword(password);
}

function id(options: TOptions, name: string): string {
  const value = required(options, name);
  if (!UUID_PATTERN.test(value))
    throw new UsageError(`--${name} must be an id printed by an earlier command`);
  return value;
}

export interface TCommandContext {
  db: TDb;
  env: TAdminEnv;
  /** Tells every API process to drop cached keys (hash, or '*' for all). */
  invalidate(hashes: string[]): Promise<void>;
}

type THandler = (ctx: TCommandContext, options: TOptions) => Promise<Record<string, unknown>>;

export const COMMANDS: Record<string, THandler> = {
  'account create': async ({ db }, o) => {
    const email = required(o, 'email');
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) throw new UsageError('--email must be an e-mail address');
    const name = required(o, 'name');
    const chosenPlan = plan(required(o, 'plan'));
    const passwordHash = await passwordHashOf(o);
    const accounts = createAccountRepository(db);
    const account = await accounts.createAccount({ name, ownerEmail: email, plan: chosenPlan });
    if (passwordHash) await createOwnerRepository(db).setPasswordHash(account.id, passwordHash);
    const key = generateApiKey();
    await accounts.createApiKey(account.id, key);
    return { accountId: account.id, apiKey: key.key };
  },

  'account set-password': async ({ db }, o) => {
    const accountId = id(o, 'account');
    if (o['password'] === undefined) throw new UsageError('--password is required');
    const passwordHash = (await passwordHashOf(o))!;
    if (!(await createOwnerRepository(db).setPasswordHash(accountId, passwordHash)))
      throw new UsageError(`no account ${accountId}`);
    return { accountId };
  },

  'account set-plan': async ({ db, invalidate }, o) => {
    const accountId = id(o, 'account');
    const next = plan(required(o, 'plan'));
    const accounts = createAccountRepository(db);
    if (!(await accounts.setPlan(accountId, next))) throw new UsageError(`no account ${accountId}`);
    await invalidate(await accounts.keyHashesOfAccount(accountId));
    return { accountId, plan: next };
  },

  'key create': async ({ db }, o) => {
    const accountId = id(o, 'account');
    const accounts = createAccountRepository(db);
    if (!(await accounts.findAccount(accountId))) throw new UsageError(`no account ${accountId}`);
    const key = generateApiKey();
    const row = await accounts.createApiKey(accountId, key);
    return { apiKeyId: row.id, apiKey: key.key };
  },

  'key revoke': async ({ db, invalidate }, o) => {
    const keyId = id(o, 'key-id');
    const revoked = await createAccountRepository(db).revokeApiKey(keyId);
    if (!revoked) throw new UsageError(`no API key ${keyId}`);
    await invalidate([revoked.hash]);
    return { apiKeyId: keyId, revoked: true };
  },

  'social connect': async ({ db, env }, o) => {
    const accountId = id(o, 'account');
    const platform = required(o, 'platform');
    if (!isPlatform(platform)) throw new UsageError(`--platform ${platform} is not a supported network`);
    const instance = o.instance;
    if (instance) {
      try {
        const url = new URL(instance);
        if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error();
      } catch {
        throw new UsageError('--instance must be an http(s) URL');
      }
    }
    const expiresAt = o['expires-at'];
    // With an offset, like every date-time the service takes; the publisher refreshes ahead of it.
    if (
      expiresAt !== undefined &&
      (!/(Z|[+-]\d{2}:\d{2})$/.test(expiresAt) || Number.isNaN(Date.parse(expiresAt)))
    )
      throw new UsageError(
        '--expires-at must be an ISO 8601 date-time with an offset, e.g. 2026-01-01T12:00:00Z',
      );
    const tokenExpiresAt = expiresAt === undefined ? null : new Date(expiresAt);
    if (!(await createAccountRepository(db).findAccount(accountId)))
      throw new UsageError(`no account ${accountId}`);
    const account = await createSocialAccountRepository(db).connect({
      accountId,
      platform,
      accountName: required(o, 'name'),
      externalId: o['external-id'] ?? null,
      instanceUrl: instance ?? null,
      credentialsEncrypted: sealCredentials(
        { token: required(o, 'token'), ...(o['refresh-token'] ? { refreshToken: o['refresh-token'] } : {}) },
        env.encryptionKey,
      ),
      tokenExpiresAt,
    });
    return { socialAccountId: account.id };
  },

  'social disconnect': async ({ db }, o) => {
    const accountId = id(o, 'account');
    const socialAccountId = id(o, 'social-account');
    const account = await createSocialAccountRepository(db).disconnect(accountId, socialAccountId, 'manual');
    if (!account) throw new UsageError(`no social account ${socialAccountId} in account ${accountId}`);
    return { socialAccountId, isActive: account.isActive };
  },

  /** Delivery history of one webhook, newest first (`--limit`, `--offset`). */
  'webhook deliveries': async ({ db }, o) => {
    const accountId = id(o, 'account');
    const webhookId = id(o, 'webhook');
    const limit = Number(o.limit ?? 20);
    const offset = Number(o.offset ?? 0);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new UsageError('--limit must be 1..100');
    if (!Number.isInteger(offset) || offset < 0) throw new UsageError('--offset must be 0 or more');
    const page = await createWebhookRepository(db).listDeliveries(accountId, webhookId, { limit, offset });
    if (!page) throw new UsageError(`no webhook ${webhookId} in account ${accountId}`);
    return { webhookId, total: page.total, deliveries: page.deliveries.map(presentDeliveryB) };
  },

  /** Starts a failed delivery over and enqueues it (the webhooks reconciler enqueues it if Redis is down). */
  'webhook retry': async ({ db, env }, o) => {
    const accountId = id(o, 'account');
    const deliveryId = id(o, 'delivery');
    const webhooks = createWebhookRepository(db);
    const delivery = await webhooks.findDelivery(accountId, deliveryId);
    if (!delivery) throw new UsageError(`no delivery ${deliveryId} in account ${accountId}`);
    const outcome = await webhooks.resetFailedDelivery(accountId, delivery.webhookId, deliveryId);
    if (outcome.kind === 'not_failed')
      throw new UsageError(`delivery ${deliveryId} is ${outcome.status}, not failed`);
    if (outcome.kind === 'webhook_inactive')
      throw new UsageError('the webhook is not active; re-activate it first');
    if (outcome.kind !== 'reset') throw new UsageError(`no delivery ${deliveryId} in account ${accountId}`);
    const redis = createProducerConnection(env.REDIS_URL, { lazyConnect: true });
    redis.on('error', () => undefined);
    const queues = createQueues(redis, env.QUEUE_PREFIX);
    let enqueued = true;
    try {
      await redis.connect();
      await enqueueWebhookDelivery(
        queues,
        { deliveryId, eventId: delivery.eventId, webhookId: delivery.webhookId },
        { replaceFinished: true },
      );
    } catch {
      enqueued = false;
    } finally {
      await queues.close().catch(() => undefined);
      redis.disconnect();
    }
    return { deliveryId, status: outcome.delivery.status, enqueued };
  },
};

export const OPTION_NAMES = [
  'name',
  'email',
  'plan',
  'account',
  'key-id',
  'platform',
  'token',
  'refresh-token',
  'expires-at',
  'instance',
  'external-id',
  'social-account',
  'webhook',
  'delivery',
  'limit',
  'offset',
  'password',
];
