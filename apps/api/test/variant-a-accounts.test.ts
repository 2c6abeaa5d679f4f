import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createSocialAccountRepository } from '@sps/db';
import request, { type Response } from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';

interface TIssue {
  field: string;
  message: string;
}
interface TErrorBodyA {
  error: string;
  fix?: string;
  details?: { field?: string; issues?: TIssue[] } & Record<string, unknown>;
}

function expectErrorA(res: Response, status: number, field?: string): TErrorBodyA {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const body = res.body as TErrorBodyA;
  expect(typeof body.error).toBe('string');
  for (const key of Object.keys(body)) expect(['error', 'fix', 'details']).toContain(key);
  if (field !== undefined) {
    expect(body.error).toContain(field);
    expect(body.details?.issues?.map((i) => i.field)).toContain(field);
  }
  return body;
}

const DEFAULTS = { enabled: true, intervalHours: 4, startHour: 9, endHour: 17, timezone: 'UTC' };

describe('Variant A accounts', () => {
  let api: TTestApi;

  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(() => api.close());

  describe('GET /api/accounts', () => {
    it('answers {accounts: []} when nothing is connected', async () => {
      const { apiKey } = await api.account();
      const res = await request(api.app).get('/api/accounts').set(bearer(apiKey));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ accounts: [] });
    });

    it('lists connected Variant A accounts as exactly {id, platform, accountName, needsReauth}', async () => {
      const { apiKey, accountId } = await api.account();
      const tw = await api.connect(accountId, 'twitter', 'tw-user');
      const ma = await api.connect(accountId, 'mastodon', 'ma-user', {
        instanceUrl: 'https://mastodon.example',
      });
      const bs = await api.connect(accountId, 'bluesky', 'bs-user');
      const th = await api.connect(accountId, 'threads', 'th-user');
      const li = await api.connect(accountId, 'linkedin', 'li-user');
      const res = await request(api.app).get('/api/accounts').set(bearer(apiKey));
      expect(res.status).toBe(200);
      expect(Object.keys(res.body)).toEqual(['accounts']);
      const accounts = res.body.accounts as Record<string, unknown>[];
      for (const a of accounts)
        expect(Object.keys(a).sort()).toEqual(['accountName', 'id', 'needsReauth', 'platform']);
      expect(accounts).toEqual(
        expect.arrayContaining([
          { id: tw, platform: 'twitter', accountName: 'tw-user', needsReauth: false },
          { id: ma, platform: 'mastodon', accountName: 'ma-user', needsReauth: false },
          { id: bs, platform: 'bluesky', accountName: 'bs-user', needsReauth: false },
          { id: th, platform: 'threads', accountName: 'th-user', needsReauth: false },
          { id: li, platform: 'linkedin', accountName: 'li-user', needsReauth: false },
        ]),
      );
      expect(accounts).toHaveLength(5);
    });

    it('leaves out networks that are not Variant A identifiers', async () => {
      const { apiKey, accountId } = await api.account();
      const tw = await api.connect(accountId, 'twitter');
      await api.connect(accountId, 'instagram');
      await api.connect(accountId, 'telegram');
      await api.connect(accountId, 'discord');
      const res = await request(api.app).get('/api/accounts').set(bearer(apiKey));
      expect(res.status).toBe(200);
      expect((res.body.accounts as { id: string }[]).map((a) => a.id)).toEqual([tw]);
      // Variant B still sees all of them.
      const inB = await request(api.app).get('/v1/accounts').set(bearer(apiKey));
      expect(inB.status).toBe(200);
    });

    it('shows an expired account with needsReauth and hides one disconnected on purpose', async () => {
      const { apiKey, accountId } = await api.account();
      const repo = createSocialAccountRepository(api.db);
      const expired = await api.connect(accountId, 'twitter', 'expired');
      const gone = await api.connect(accountId, 'bluesky', 'gone');
      await repo.disconnect(accountId, expired, 'expired');
      await repo.disconnect(accountId, gone, 'manual');
      const res = await request(api.app).get('/api/accounts').set(bearer(apiKey));
      expect(res.body.accounts).toEqual([
        { id: expired, platform: 'twitter', accountName: 'expired', needsReauth: true },
      ]);
    });

    it("never shows another account's connections", async () => {
      const mine = await api.account();
      const theirs = await api.account();
      const own = await api.connect(mine.accountId, 'twitter', 'me');
      await api.connect(theirs.accountId, 'twitter', 'them');
      await api.connect(theirs.accountId, 'mastodon', 'them-too');
      const res = await request(api.app).get('/api/accounts').set(bearer(mine.apiKey));
      expect(res.body.accounts).toEqual([
        { id: own, platform: 'twitter', accountName: 'me', needsReauth: false },
      ]);
      const theirList = await request(api.app).get('/api/accounts').set('x-api-key', theirs.apiKey);
      expect((theirList.body.accounts as { accountName: string }[]).map((a) => a.accountName).sort()).toEqual(
        ['them', 'them-too'],
      );
    });
  });

  describe('queue settings', () => {
    let key: string;
    beforeAll(async () => {
      ({ apiKey: key } = await api.account());
    });
    const get = (apiKey = key) => request(api.app).get('/api/queue-settings').set(bearer(apiKey));
    const put = (body: unknown, apiKey = key) =>
      request(api.app)
        .put('/api/queue-settings')
        .set(bearer(apiKey))
        .send(body as object);

    it('answers the defaults before anything is saved', async () => {
      const res = await get();
      expect(res.status).toBe(200);
      expect(res.body).toEqual(DEFAULTS);
    });

    it('round-trips a full PUT and GET', async () => {
      const next = { enabled: false, intervalHours: 2, startHour: 22, endHour: 2, timezone: 'Europe/Berlin' };
      const res = await put(next);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(next);
      expect((await get()).body).toEqual(next);
    });

    it('keeps omitted fields on a partial PUT', async () => {
      const res = await put({ intervalHours: 3 });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        enabled: false,
        intervalHours: 3,
        startHour: 22,
        endHour: 2,
        timezone: 'Europe/Berlin',
      });
    });

    it('keeps settings per account', async () => {
      const { apiKey } = await api.account();
      expect((await get(apiKey)).body).toEqual(DEFAULTS);
    });

    it.each([[1], [24]])('accepts intervalHours %i', async (intervalHours) => {
      const res = await put({ intervalHours });
      expect(res.status).toBe(200);
      expect(res.body.intervalHours).toBe(intervalHours);
    });

    it.each([[0], [25], [-1], [1.5], ['4'], [null]])(
      'rejects intervalHours %p with a 400 naming it',
      async (intervalHours) => {
        const before = (await get()).body;
        expectErrorA(await put({ intervalHours }), 400, 'intervalHours');
        expect((await get()).body).toEqual(before);
      },
    );

    it.each([
      ['startHour', 0],
      ['startHour', 23],
      ['endHour', 0],
      ['endHour', 23],
    ])('accepts %s %i', async (field, value) => {
      const res = await put({ [field]: value });
      expect(res.status).toBe(200);
      expect(res.body[field]).toBe(value);
    });

    it.each([
      ['startHour', -1],
      ['startHour', 24],
      ['startHour', 9.5],
      ['startHour', '9'],
      ['endHour', -1],
      ['endHour', 24],
      ['endHour', 17.25],
      ['endHour', true],
    ])('rejects %s %p with a 400 naming it', async (field, value) => {
      expectErrorA(await put({ [field]: value }), 400, field);
    });

    it('rejects a non-boolean enabled', async () => {
      expectErrorA(await put({ enabled: 'yes' }), 400, 'enabled');
    });

    it.each([
      ['an unknown zone', 'Mars/Olympus'],
      ['an empty string', ''],
      ['a NUL character', 'Europe/Berlin\u0000'],
      ['a number', 42],
      ['an offset', '+02:00x'],
    ])('rejects %s as timezone with a 400 naming it', async (_label, timezone) => {
      expectErrorA(await put({ timezone }), 400, 'timezone');
    });

    it('accepts IANA names and UTC', async () => {
      for (const timezone of ['America/New_York', 'Asia/Kolkata', 'UTC']) {
        const res = await put({ timezone });
        expect(res.status).toBe(200);
        expect(res.body.timezone).toBe(timezone);
      }
    });

    it('rejects a body that is not an object, and malformed JSON, in A shape', async () => {
      expectErrorA(await put([]), 400);
      const raw = await request(api.app)
        .put('/api/queue-settings')
        .set(bearer(key))
        .set('Content-Type', 'application/json')
        .send('{"enabled":');
      expectErrorA(raw, 400, 'body');
      const text = await request(api.app)
        .put('/api/queue-settings')
        .set(bearer(key))
        .set('Content-Type', 'text/plain')
        .send('x');
      expectErrorA(text, 400, 'body');
    });

    it('reports several bad fields together', async () => {
      const body = expectErrorA(await put({ intervalHours: 0, startHour: 24 }), 400, 'intervalHours');
      expect(body.details?.issues?.map((i) => i.field)).toEqual(
        expect.arrayContaining(['intervalHours', 'startHour']),
      );
    });

    it('needs a key', async () => {
      expectErrorA(await request(api.app).get('/api/queue-settings'), 401);
      expectErrorA(await request(api.app).put('/api/queue-settings').send({ intervalHours: 2 }), 401);
    });
  });
});
