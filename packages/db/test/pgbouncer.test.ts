import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createDb, deployMigrations, parseDatabaseUrl, type TDb } from '../src/index.js';
import { baseTestUrl, createTestAccount, createTestDatabase, type TTestDatabase } from '../src/testing.js';

// PgBouncer in transaction pooling mode (`pgbouncer=true` on the URL): no statement is named (a named
// statement prepared in one transaction is missing, or taken, on the server connection of the next), and
// no session parameter is sent at start-up (PgBouncer refuses them). Observed on a direct connection, where
// the session is visible; `.ci/run` also runs this file with TEST_PGBOUNCER_URL, through a real PgBouncer.

const probe = { name: 'sps_probe_named', text: 'SELECT 1 AS one' };

async function sessionOf(db: TDb): Promise<{ prepared: number; statementTimeout: string }> {
  const { inSqlTransaction } = await import('../src/client.js');
  return inSqlTransaction(db, async (client) => {
    await client.query(probe);
    const prepared = await client.query(
      "SELECT count(*)::int AS n FROM pg_prepared_statements WHERE name = 'sps_probe_named'",
    );
    const timeout = await client.query('SHOW statement_timeout');
    return { prepared: prepared.rows[0].n as number, statementTimeout: timeout.rows[0].statement_timeout };
  });
}

describe('PgBouncer transaction pooling', () => {
  it('reads pgbouncer=true from the URL and hands PostgreSQL the URL without it', () => {
    expect(parseDatabaseUrl('postgresql://u@h:6432/db?pgbouncer=true&sslmode=disable')).toEqual({
      connectionString: 'postgresql://u@h:6432/db?sslmode=disable',
      pgbouncer: true,
    });
    expect(parseDatabaseUrl('postgresql://u@h:5432/db')).toEqual({
      connectionString: 'postgresql://u@h:5432/db',
      pgbouncer: false,
    });
    expect(parseDatabaseUrl('postgresql://u@h/db?pgbouncer=false').pgbouncer).toBe(false);
  });

  it('names statements and bounds the session on a direct connection, and does neither behind PgBouncer', async () => {
    const direct = createDb(baseTestUrl(), { poolMax: 1 });
    const pooled = createDb(`${baseTestUrl()}?pgbouncer=true`, { poolMax: 1 });
    try {
      expect(await sessionOf(direct)).toEqual({ prepared: 1, statementTimeout: '30s' });
      const behind = await sessionOf(pooled);
      expect(behind.prepared).toBe(0);
      expect(behind.statementTimeout).not.toBe('30s');
    } finally {
      await Promise.all([direct.$disconnect(), pooled.$disconnect()]);
    }
  });

  it('refuses to migrate through PgBouncer and says to set DIRECT_DATABASE_URL', async () => {
    const root = resolve(import.meta.dirname, '../../..');
    await expect(
      deployMigrations('postgresql://postgres@127.0.0.1:1/none?pgbouncer=true', {
        schemaPath: resolve(root, 'prisma/schema.prisma'),
        migrationsDir: resolve(root, 'prisma/migrations'),
      }),
    ).rejects.toThrow(/DIRECT_DATABASE_URL/);
  });
});

describe('named hot-path statements on the test database URL (through PgBouncer when TEST_PGBOUNCER_URL is set)', () => {
  let database: TTestDatabase;
  let db: TDb;
  beforeAll(async () => {
    database = await createTestDatabase();
    db = createDb(database.url, { poolMax: 4 });
  });
  afterAll(async () => {
    await db.$disconnect();
    await database.drop();
  });

  it('runs the same named statement in many transactions on few connections without a clash', async () => {
    const { inSqlTransaction, sqlOf } = await import('../src/client.js');
    const { accountId } = await createTestAccount(db);
    const read = { name: 'sps_probe_account', text: 'SELECT id FROM accounts WHERE id = $1::uuid' };
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        i % 2 === 0
          ? sqlOf(db).query({ ...read, values: [accountId] })
          : inSqlTransaction(db, (client) => client.query({ ...read, values: [accountId] })),
      ),
    );
    for (const result of results) expect(result.rows).toEqual([{ id: accountId }]);
  });

  it("opens the admin CLI's single connection the same way", async () => {
    const { openSqlClient } = await import('../src/sql.js');
    const client = await openSqlClient(database.url);
    try {
      for (let i = 0; i < 3; i += 1)
        expect((await client.query({ name: 'sps_probe_cli', text: 'SELECT 1 AS one' })).rows).toEqual([
          { one: 1 },
        ]);
    } finally {
      await client.end();
    }
  });
});
