import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { openCredentials, secretBox } from '@sps/core';
import { createDb, type TDb } from '@sps/db';
import { createTestDatabase, type TTestDatabase } from '@sps/db/testing';

const run = promisify(execFile);
const CLI = resolve(import.meta.dirname, '../dist/main.js');

describe('admin CLI: social connect for operators', () => {
  let database: TTestDatabase;
  let db: TDb;
  let accountId: string;
  const admin = async (...args: string[]) => {
    try {
      const { stdout } = await run(process.execPath, [CLI, ...args], {
        env: {
          ...process.env,
          DATABASE_URL: database.url,
          REDIS_URL: 'redis://127.0.0.1:1',
          ENCRYPTION_KEY: '',
        },
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
    const created = await admin(
      'account',
      'create',
      '--name',
      'Ops',
      '--email',
      'ops@acme.test',
      '--plan',
      'pro',
    );
    accountId = created.out['accountId'] ?? '';
  });
  afterAll(async () => {
    await db.$disconnect();
    await database.drop();
  });

  it('takes a negative --external-id (Telegram channels) as a value', async () => {
    const res = await admin(
      'social',
      'connect',
      '--account',
      accountId,
      '--platform',
      'telegram',
      '--name',
      'channel',
      '--token',
      '123456:abcdefghijklmnopqrstuvwxyz',
      '--external-id',
      '-1001234567890',
    );
    expect(res.code).toBe(0);
    const row = await db.socialAccount.findUniqueOrThrow({ where: { id: res.out['socialAccountId'] ?? '' } });
    expect(row.externalId).toBe('-1001234567890');
  });

  it('stores --refresh-token inside the sealed credentials and --expires-at as the token expiry', async () => {
    const res = await admin(
      'social',
      'connect',
      '--account',
      accountId,
      '--platform',
      'twitter',
      '--name',
      'ops_x',
      '--token',
      'access-1',
      '--refresh-token',
      'refresh-1',
      '--expires-at',
      '2030-01-01T00:00:00Z',
    );
    expect(res.code).toBe(0);
    const row = await db.socialAccount.findUniqueOrThrow({ where: { id: res.out['socialAccountId'] ?? '' } });
    expect(row.tokenExpiresAt?.toISOString()).toBe('2030-01-01T00:00:00.000Z');
    expect(row.credentialsEncrypted).not.toContain('refresh-1');
    expect(openCredentials(row.credentialsEncrypted, secretBox.developmentKey('local'), row.id)).toEqual({
      token: 'access-1',
      refreshToken: 'refresh-1',
    });
  });

  it('refuses an --expires-at without an offset, naming the option', async () => {
    const res = await admin(
      'social',
      'connect',
      '--account',
      accountId,
      '--platform',
      'twitter',
      '--name',
      'x',
      '--token',
      't',
      '--expires-at',
      '2030-01-01 00:00',
    );
    expect(res.code).toBe(2);
    expect(res.out['error']).toContain('--expires-at');
  });
});
