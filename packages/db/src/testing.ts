import { randomBytes } from 'node:crypto';
import { generateApiKey } from '@sps/core';
import pg from 'pg';
import { createAccountRepository, type TPlan } from './account-repository.js';
import type { TDb } from './client.js';

// Test helpers only; production code never imports `@sps/db/testing`.

export const TEST_TEMPLATE_DB = 'sps_test_template';

export function baseTestUrl(): string {
  // Test helpers may read the environment: they run inside the test process, never in production.
  return process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

export interface TTestDatabase {
  url: string;
  drop(): Promise<void>;
}

/** A fresh database cloned from the migrated template, so test files never share rows. */
export async function createTestDatabase(): Promise<TTestDatabase> {
  const base = baseTestUrl();
  const name = `sps_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: withDatabase(base, 'postgres') });
  await admin.connect();
  try {
    // Concurrent clones of one template can collide on its lock; retry briefly.
    for (let attempt = 0; ; attempt += 1) {
      try {
        await admin.query(`CREATE DATABASE "${name}" TEMPLATE "${TEST_TEMPLATE_DB}"`);
        break;
      } catch (error) {
        if (attempt >= 20) throw error;
        await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
      }
    }
  } finally {
    await admin.end();
  }
  const url = withDatabase(base, name);
  return {
    url,
    async drop() {
      const client = new pg.Client({ connectionString: withDatabase(base, 'postgres') });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await client.end();
    },
  };
}

export function templateUrl(): string {
  return withDatabase(baseTestUrl(), TEST_TEMPLATE_DB);
}

/** A Redis key prefix of its own per test file (BullMQ queues, limiter counters). */
export function testPrefix(label = 'test'): string {
  return `sps-${label}-${randomBytes(4).toString('hex')}`;
}

export interface TTestAccount {
  accountId: string;
  apiKey: string;
  keyId: string;
}

export async function createTestAccount(
  db: TDb,
  plan: TPlan = 'pro',
  name = 'Test account',
): Promise<TTestAccount> {
  const repo = createAccountRepository(db);
  const account = await repo.createAccount({
    name,
    ownerEmail: `owner-${randomBytes(3).toString('hex')}@example.com`,
    plan,
  });
  const key = generateApiKey();
  const row = await repo.createApiKey(account.id, key);
  return { accountId: account.id, apiKey: key.key, keyId: row.id };
}
