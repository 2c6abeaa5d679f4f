import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DEVELOPMENT_KEY_WARNING, presentAccountB } from '@sps/core';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from '../../api/test/harness.js';
import { COMMAND_SPECS } from '../src/command-specs.js';

const run = promisify(execFile);
const CLI = resolve(import.meta.dirname, '../dist/main.js');
// Written when the CLI exits: every CommonJS module it loaded (Prisma's runtime, ioredis, BullMQ and
// twitter-text are CommonJS, so a command that loads them leaves them here).
const TRACE = `data:text/javascript,${encodeURIComponent(
  `import { createRequire } from 'node:module'; import { writeFileSync } from 'node:fs';
   const r = createRequire(process.cwd() + '/');
   process.on('exit', () => writeFileSync(process.env.ADMIN_TRACE, JSON.stringify(Object.keys(r.cache))));`,
)}`;

describe('admin CLI: help, contract outputs, and what a simple command loads', () => {
  let api: TTestApi;
  const traceDir = mkdtempSync(join(tmpdir(), 'sps-admin-trace-'));
  let traces = 0;

  /** Runs the built CLI against the test API's database, Redis prefix and key. */
  const admin = async (args: string[], opts: { trace?: boolean } = {}) => {
    traces += 1;
    const trace = join(traceDir, `t${traces}.json`);
    try {
      const { stdout, stderr } = await run(
        process.execPath,
        [...(opts.trace ? ['--import', TRACE] : []), CLI, ...args],
        {
          env: {
            ...process.env,
            DATABASE_URL: api.env.DATABASE_URL,
            REDIS_URL: api.env.REDIS_URL,
            QUEUE_PREFIX: api.env.QUEUE_PREFIX,
            ADMIN_TRACE: trace,
          },
        },
      );
      return {
        code: 0,
        stdout,
        stderr,
        loaded: opts.trace ? (JSON.parse(readFileSync(trace, 'utf8')) as string[]) : [],
      };
    } catch (error) {
      const e = error as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr, loaded: [] as string[] };
    }
  };
  const json = (out: string) => JSON.parse(out) as Record<string, unknown>;

  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(() => api.close());

  it('answers --help for itself and for every command as text on stdout with exit 0', async () => {
    for (const args of [['--help'], ['-h'], ['help'], []]) {
      const res = await admin(args);
      expect(res.code).toBe(0);
      expect(res.stdout).toMatch(/^Usage: npm run -s admin -- <command> \[options\]/);
      for (const spec of COMMAND_SPECS) expect(res.stdout).toContain(spec.name);
    }
    for (const spec of COMMAND_SPECS) {
      const res = await admin([...spec.name.split(' '), '--help']);
      expect(res.code).toBe(0);
      expect(res.stderr).toBe('');
      expect(res.stdout).toContain(`Usage: npm run -s admin -- ${spec.name} `);
      for (const option of spec.options) expect(res.stdout).toContain(`--${option.name} ${option.value}`);
      expect(res.stdout).toContain(`Prints: ${spec.prints}`);
    }
    const group = await admin(['account', '--help']);
    expect(group.stdout).toContain('account set-password');
    expect(group.stdout).not.toContain('key create');
    const helpWord = await admin(['help', 'key', 'create']);
    expect(helpWord.stdout).toContain('Usage: npm run -s admin -- key create --account ID');
    // Commands keep the contract: one JSON object, errors as JSON on stderr.
    const unknown = await admin(['key', 'make']);
    expect(unknown.code).toBe(2);
    expect(json(unknown.stderr).error).toMatch(/unknown command "key make"/);
  });

  it('keeps the exact outputs of the contract, and a simple command loads neither Prisma nor Redis', async () => {
    const created = await admin(
      ['account', 'create', '--name', 'Ops', '--email', 'ops@acme.test', '--plan', 'none'],
      {
        trace: true,
      },
    );
    expect(created.code).toBe(0);
    const account = json(created.stdout);
    expect(Object.keys(account).sort()).toEqual(['accountId', 'apiKey']);
    const accountId = String(account.accountId);
    const apiKey = String(account.apiKey);
    expect(apiKey).toMatch(/^sps_live_/);
    expect(created.loaded.some((m) => m.includes('/pg/'))).toBe(true);
    for (const heavy of ['@prisma', 'ioredis', 'bullmq', 'twitter-text', 'luxon'])
      expect(created.loaded.filter((m) => m.includes(heavy))).toEqual([]);

    const key = await admin(['key', 'create', '--account', accountId], { trace: true });
    expect(Object.keys(json(key.stdout)).sort()).toEqual(['apiKey', 'apiKeyId']);
    expect(key.loaded.filter((m) => /@prisma|ioredis|bullmq|twitter-text/.test(m))).toEqual([]);
    const stored = await api.db.apiKey.findUniqueOrThrow({
      where: { id: String(json(key.stdout).apiKeyId) },
    });
    expect(stored).toMatchObject({ accountId, revokedAt: null });

    // Plan none: Variant A refuses to create posts; set-plan evicts the cached key, so the next request sees pro.
    await request(api.app)
      .post('/api/posts')
      .set(bearer(apiKey))
      .send({ content: 'x', platforms: ['twitter'] })
      .expect(403);
    const plan = await admin(['account', 'set-plan', '--account', accountId, '--plan', 'pro']);
    expect(json(plan.stdout)).toEqual({ accountId, plan: 'pro' });
    let status = 403;
    for (let i = 0; i < 50 && status === 403; i += 1) {
      status = (
        await request(api.app)
          .post('/api/posts')
          .set(bearer(apiKey))
          .send({ content: 'x', platforms: ['twitter'] })
      ).status;
      if (status === 403) await new Promise((r) => setTimeout(r, 20));
    }
    expect(status).toBe(201);

    const social = await admin(
      [
        'social',
        'connect',
        '--account',
        accountId,
        '--platform',
        'mastodon',
        '--name',
        'ops_masto',
        '--token',
        't1',
        '--instance',
        'https://mastodon.example',
        '--external-id',
        '-42',
        '--expires-at',
        '2031-05-01T10:00:00+02:00',
      ],
      { trace: true },
    );
    expect(social.code).toBe(0);
    expect(social.loaded.filter((m) => /@prisma|ioredis|bullmq|twitter-text/.test(m))).toEqual([]);
    const socialAccountId = String(json(social.stdout).socialAccountId);
    // The contract's answer; sealed with the development key (no ENCRYPTION_KEY here), the CLI says so in it.
    const { warning, ...answer } = json(social.stdout);
    expect(Object.keys(answer)).toEqual(['socialAccountId']);
    expect(warning).toBe(DEVELOPMENT_KEY_WARNING);
    // The row and its account.connected event, as the repository (and Variant B) present them.
    const row = await api.db.socialAccount.findUniqueOrThrow({ where: { id: socialAccountId } });
    expect(row).toMatchObject({
      platform: 'mastodon',
      externalId: '-42',
      instanceUrl: 'https://mastodon.example',
      isActive: true,
      tokenExpiresAt: new Date('2031-05-01T08:00:00Z'),
    });
    const listed = await request(api.app).get('/v1/accounts').set(bearer(apiKey));
    const event = await api.db.event.findFirstOrThrow({ where: { accountId, type: 'account.connected' } });
    expect(event.data).toEqual({ account: listed.body.accounts[0] });
    expect(event.data).toEqual({
      account: presentAccountB({ ...row, platform: 'mastodon' }),
    });

    const disconnected = await admin([
      'social',
      'disconnect',
      '--account',
      accountId,
      '--social-account',
      socialAccountId,
    ]);
    expect(json(disconnected.stdout)).toEqual({ socialAccountId, isActive: false });

    const password = await admin([
      'account',
      'set-password',
      '--account',
      accountId,
      '--password',
      'long enough password',
    ]);
    expect(json(password.stdout)).toEqual({ accountId });

    // Revoking evicts the key from the API's cache at once.
    await request(api.app).get('/v1/posts').set(bearer(apiKey)).expect(200);
    const keyId = (await api.db.apiKey.findFirstOrThrow({ where: { accountId, hash: { not: stored.hash } } }))
      .id;
    const revoked = await admin(['key', 'revoke', '--key-id', keyId]);
    expect(json(revoked.stdout)).toEqual({ apiKeyId: keyId, revoked: true });
    let keyStatus = 200;
    for (let i = 0; i < 50 && keyStatus === 200; i += 1) {
      keyStatus = (await request(api.app).get('/v1/posts').set(bearer(apiKey))).status;
      if (keyStatus === 200) await new Promise((r) => setTimeout(r, 20));
    }
    expect(keyStatus).toBe(401);
    // Revoking again keeps the first revocation time.
    const first = (await api.db.apiKey.findUniqueOrThrow({ where: { id: keyId } })).revokedAt;
    await admin(['key', 'revoke', '--key-id', keyId]);
    expect((await api.db.apiKey.findUniqueOrThrow({ where: { id: keyId } })).revokedAt).toEqual(first);
  });

  it('names a missing account, key or option (exit 2) and writes nothing', async () => {
    const nobody = '00000000-0000-4000-8000-000000000000';
    const before = await api.db.socialAccount.count();
    for (const args of [
      ['key', 'create', '--account', nobody],
      ['account', 'set-plan', '--account', nobody, '--plan', 'pro'],
      ['account', 'set-password', '--account', nobody, '--password', 'long enough password'],
      ['social', 'connect', '--account', nobody, '--platform', 'twitter', '--name', 'x', '--token', 't'],
    ]) {
      const res = await admin(args);
      expect(res.code).toBe(2);
      expect(json(res.stderr)).toEqual({ error: `no account ${nobody}` });
      expect(res.stdout).toBe('');
    }
    expect(json((await admin(['key', 'revoke', '--key-id', nobody])).stderr)).toEqual({
      error: `no API key ${nobody}`,
    });
    expect(await api.db.socialAccount.count()).toBe(before);
    expect(await api.db.event.count({ where: { accountId: nobody } })).toBe(0);
    const bad = await admin(['key', 'create', '--account', 'abc']);
    expect(json(bad.stderr).error).toBe('--account must be an id printed by an earlier command');
    const plan = await admin(['account', 'create', '--name', 'x', '--email', 'x@y.z', '--plan', 'gold']);
    expect(json(plan.stderr).error).toBe('--plan must be one of none, free, starter, pro');
  });
});
