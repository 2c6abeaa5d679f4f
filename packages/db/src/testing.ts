import { randomBytes } from 'node:crypto';
import { generateApiKey } from '@sps/core';
import pg from 'pg';
import { createAccountRepository, type TPlan } from './account-repository.js';
import { SQL_POOL, sqlOf, type TDb } from './client.js';

// Test helpers only; production code never imports `@sps/db/testing`.

// A worktree of its own may name its own template, so parallel checkouts never migrate one template twice.
export const TEST_TEMPLATE_DB = process.env.TEST_TEMPLATE_DB ?? 'sps_test_template';

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
  const url = appUrl(name);
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

/**
 * The URL the code under test gets: straight to PostgreSQL, or through the PgBouncer of TEST_PGBOUNCER_URL
 * (`.ci/run` runs the database-heavy files once that way) with `pgbouncer=true`. Creating and dropping
 * databases always goes direct (baseTestUrl).
 */
function appUrl(database: string): string {
  const pooler = process.env.TEST_PGBOUNCER_URL;
  if (!pooler) return withDatabase(baseTestUrl(), database);
  const u = new URL(withDatabase(pooler, database));
  u.searchParams.set('pgbouncer', 'true');
  return u.toString();
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

/**
 * A client whose writes fail with `error` while `failing()` is true: Prisma transactions and raw
 * statements, and every statement of the plain-SQL hot paths (their pool is wrapped too). Model reads
 * keep working, so a test can look at what was left behind.
 */
export function failingWrites(db: TDb, error: unknown, failing: () => boolean): TDb {
  const pool = sqlOf(db);
  const failingPool = new Proxy(pool, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (prop === 'query' || prop === 'connect') {
        return (...args: unknown[]) =>
          failing() ? Promise.reject(error) : (value as (...a: unknown[]) => unknown).apply(target, args);
      }
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return new Proxy(db, {
    get(target, prop, receiver) {
      if (prop === SQL_POOL) return failingPool;
      const value = Reflect.get(target, prop, receiver);
      if (prop === '$transaction' || prop === '$queryRaw') {
        return (...args: unknown[]) =>
          failing() ? Promise.reject(error) : (value as (...a: unknown[]) => unknown).apply(target, args);
      }
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** The error a query against an unreachable PostgreSQL throws (from the plain pg pool, as the hot paths see it). */
export async function unreachableDbError(): Promise<unknown> {
  const dead = new pg.Pool({ connectionString: 'postgresql://postgres@127.0.0.1:1/none', max: 1 });
  dead.on('error', () => undefined);
  try {
    await dead.query('SELECT 1');
    return undefined;
  } catch (error) {
    return error;
  } finally {
    await dead.end();
  }
}
