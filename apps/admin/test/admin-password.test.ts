import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { verifyPassword } from '@sps/core';
import { createDb, type TDb } from '@sps/db';
import { createTestDatabase, type TTestDatabase } from '@sps/db/testing';

const run = promisify(execFile);
const CLI = resolve(import.meta.dirname, '../dist/main.js');

describe('admin CLI: dashboard passwords', () => {
  let database: TTestDatabase;
  let db: TDb;
  const admin = async (...args: string[]) => {
    try {
      const { stdout } = await run(process.execPath, [CLI, ...args], {
        env: { ...process.env, DATABASE_URL: database.url, REDIS_URL: 'redis://127.0.0.1:1' },
      });
      return { code: 0, out: JSON.parse(stdout) as Record<string, string> };
    } catch (error) {
      const e = error as { code: number; stderr: string };
      return { code: e.code, out: JSON.parse(e.stderr) as Record<string, string> };
    }
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    db = createDb(database.url, { poolMax: 2 });
  });
  afterAll(async () => {
    await db.$disconnect();
    await database.drop();
  });

  it('account create --password stores an scrypt hash the dashboard verifies', async () => {
    const created = await admin(
      'account',
      'create',
      '--name',
      'Acme',
      '--email',
      'owner@acme.test',
      '--plan',
      'pro',
      '--password',
      'a long enough password',
    );
    expect(created.code).toBe(0);
    const row = await db.account.findUniqueOrThrow({ where: { id: created.out['accountId']! } });
    expect(row.passwordHash).toMatch(/^scrypt\$/);
    expect(await verifyPassword('a long enough password', row.passwordHash!)).toBe(true);
  });

  it('account set-password replaces it; a short password or an unknown account is refused', async () => {
    const created = await admin('account', 'create', '--name', 'B', '--email', 'b@b.test', '--plan', 'free');
    const accountId = created.out['accountId']!;
    expect((await db.account.findUniqueOrThrow({ where: { id: accountId } })).passwordHash).toBeNull();
    const set = await admin(
      'account',
      'set-password',
      '--account',
      accountId,
      '--password',
      'another password!',
    );
    expect(set).toEqual({ code: 0, out: { accountId } });
    const row = await db.account.findUniqueOrThrow({ where: { id: accountId } });
    expect(await verifyPassword('another password!', row.passwordHash!)).toBe(true);
    const short = await admin('account', 'set-password', '--account', accountId, '--password', 'short');
    expect(short.code).not.toBe(0);
    expect(short.out['error']).toMatch(/--password must be at least 10 characters/);
    const missing = await admin('account', 'set-password', '--account', accountId);
    expect(missing.out['error']).toMatch(/--password is required/);
    const unknown = await admin(
      'account',
      'set-password',
      '--account',
      '00000000-0000-4000-8000-000000000000',
      '--password',
      'another password!',
    );
    expect(unknown.out['error']).toMatch(/no account/);
  });
});
