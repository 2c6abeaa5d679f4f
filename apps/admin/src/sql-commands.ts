import { randomUUID } from 'node:crypto';
import {
  generateApiKey,
  hashPassword,
  isPlatform,
  passwordProblem,
  sealCredentials,
} from '@sps/core/essentials';
import {
  insertAccountWithKey,
  insertApiKey,
  insertConnectedAccount,
  PLANS,
  revokeKey,
  type TPlan,
  updatePasswordHash,
  updatePlan,
} from '@sps/db/sql';
import { id, required, type THandler, type TOptions, UsageError } from './context.js';

// The commands that are one plain-SQL statement each (`@sps/db/sql`, the same statements the repositories
// run): no Prisma client is loaded, and Redis only when cached keys must be evicted.

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

export const SQL_COMMANDS: Record<string, THandler> = {
  'account create': async ({ sql }, o) => {
    const email = required(o, 'email');
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) throw new UsageError('--email must be an e-mail address');
    const name = required(o, 'name');
    const chosenPlan = plan(required(o, 'plan'));
    const passwordHash = await passwordHashOf(o);
    const key = generateApiKey();
    const created = await insertAccountWithKey(
      await sql(),
      { name, ownerEmail: email, plan: chosenPlan, passwordHash },
      key,
    );
    return { accountId: created.accountId, apiKey: key.key };
  },

  'account set-password': async ({ sql }, o) => {
    const accountId = id(o, 'account');
    if (o['password'] === undefined) throw new UsageError('--password is required');
    const passwordHash = (await passwordHashOf(o))!;
    if (!(await updatePasswordHash(await sql(), accountId, passwordHash)))
      throw new UsageError(`no account ${accountId}`);
    return { accountId };
  },

  'account set-plan': async ({ sql, invalidate }, o) => {
    const accountId = id(o, 'account');
    const next = plan(required(o, 'plan'));
    const hashes = await updatePlan(await sql(), accountId, next);
    if (!hashes) throw new UsageError(`no account ${accountId}`);
    await invalidate(hashes);
    return { accountId, plan: next };
  },

  'key create': async ({ sql }, o) => {
    const accountId = id(o, 'account');
    const key = generateApiKey();
    const row = await insertApiKey(await sql(), accountId, key);
    if (!row) throw new UsageError(`no account ${accountId}`);
    return { apiKeyId: row.id, apiKey: key.key };
  },

  'key revoke': async ({ sql, invalidate }, o) => {
    const keyId = id(o, 'key-id');
    const revoked = await revokeKey(await sql(), keyId);
    if (!revoked) throw new UsageError(`no API key ${keyId}`);
    await invalidate([revoked.hash]);
    return { apiKeyId: keyId, revoked: true };
  },

  'social connect': async ({ sql, env }, o) => {
    const accountId = id(o, 'account');
    const platform = required(o, 'platform');
    if (!isPlatform(platform)) throw new UsageError(`--platform ${platform} is not a supported network`);
    const instance = o['instance'];
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
    const socialAccountId = randomUUID();
    const account = await insertConnectedAccount(await sql(), {
      id: socialAccountId,
      accountId,
      platform,
      accountName: required(o, 'name'),
      externalId: o['external-id'] ?? null,
      instanceUrl: instance ?? null,
      credentialsEncrypted: sealCredentials(
        { token: required(o, 'token'), ...(o['refresh-token'] ? { refreshToken: o['refresh-token'] } : {}) },
        env.encryptionKey,
        socialAccountId,
      ),
      tokenExpiresAt: expiresAt === undefined ? null : new Date(expiresAt),
    });
    if (!account) throw new UsageError(`no account ${accountId}`);
    return { socialAccountId: account.id };
  },
};
