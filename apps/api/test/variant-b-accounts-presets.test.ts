import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';

interface TIssue {
  field: string;
  message: string;
}

const ACCOUNT_KEYS = [
  'account_name',
  'connected_at',
  'created_at',
  'disconnected_at',
  'external_id',
  'id',
  'instance_url',
  'is_active',
  'needs_reauth',
  'permissions',
  'platform',
  'reconnect_to_grant',
  'token_expires_at',
  'updated_at',
];
const PRESET_KEYS = ['created_at', 'defaults', 'description', 'id', 'name', 'platforms', 'updated_at'];

describe('Variant B accounts and presets', () => {
  let api: TTestApi;

  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(() => api.close());

  const accounts = (key: string) => request(api.app).get('/v1/accounts').set(bearer(key));
  const presets = (key: string) => request(api.app).get('/v1/presets').set(bearer(key));
  const createPreset = (key: string, body: unknown) =>
    request(api.app)
      .post('/v1/presets')
      .set(bearer(key))
      .send(body as object);

  function expectInvalid(res: request.Response, field: string) {
    expect(res.status).toBe(400);
    expect(Object.keys(res.body).sort()).toEqual(['code', 'details', 'error']);
    expect(res.body.code).toBe('validation_error');
    const issues = res.body.details.issues as TIssue[];
    expect(issues.map((i) => i.field)).toContain(field);
    expect(res.body.details.field).toBe(issues[0]?.field);
  }

  describe('GET /v1/accounts', () => {
    it('answers {accounts: []} for an account without connections', async () => {
      const { apiKey } = await api.account('free');
      const res = await accounts(apiKey);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ accounts: [] });
    });

    it('lists connected accounts with is_active, in connection order, without credentials', async () => {
      const { apiKey, accountId } = await api.account('pro');
      const twitter = await api.connect(accountId, 'twitter', 'tw-user', { externalId: '12345' });
      const mastodon = await api.connect(accountId, 'mastodon', 'masto-user', {
        instanceUrl: 'https://mastodon.example',
      });
      const telegram = await api.connect(accountId, 'telegram', 'tg-chat');
      const res = await accounts(apiKey);
      expect(res.status).toBe(200);
      expect(Object.keys(res.body)).toEqual(['accounts']);
      expect(res.body.accounts.map((a: { id: string }) => a.id)).toEqual([twitter, mastodon, telegram]);
      for (const a of res.body.accounts) {
        expect(Object.keys(a).sort()).toEqual(ACCOUNT_KEYS);
        expect(a.is_active).toBe(true);
        expect(a.needs_reauth).toBe(false);
        expect(a.disconnected_at).toBeNull();
      }
      expect(res.body.accounts[0]).toMatchObject({
        platform: 'twitter',
        account_name: 'tw-user',
        external_id: '12345',
      });
      expect(res.body.accounts[1]).toMatchObject({
        platform: 'mastodon',
        instance_url: 'https://mastodon.example',
      });
      expect(res.text).not.toContain('token-');
      expect(res.text).not.toContain('credentials');
    });

    it('shows disconnected and expired accounts with is_active false', async () => {
      const { apiKey, accountId } = await api.account('pro');
      const gone = await api.connect(accountId, 'linkedin', 'li');
      const expired = await api.connect(accountId, 'bluesky', 'bsky');
      await api.db.socialAccount.update({
        where: { id: gone },
        data: { isActive: false, disconnectedAt: new Date() },
      });
      await api.db.socialAccount.update({
        where: { id: expired },
        data: { isActive: false, needsReauth: true },
      });
      const res = await accounts(apiKey);
      expect(res.body.accounts).toHaveLength(2);
      const byId = new Map(res.body.accounts.map((a: { id: string }) => [a.id, a]));
      expect(byId.get(gone)).toMatchObject({
        is_active: false,
        needs_reauth: false,
        disconnected_at: expect.any(String),
      });
      expect(byId.get(expired)).toMatchObject({ is_active: false, needs_reauth: true });
    });

    it("never shows another account's connections", async () => {
      const mine = await api.account('pro');
      const theirs = await api.account('pro');
      await api.connect(mine.accountId, 'discord', 'mine');
      await api.connect(theirs.accountId, 'discord', 'theirs');
      await api.connect(theirs.accountId, 'slack', 'theirs-too');
      const res = await accounts(mine.apiKey);
      expect(res.body.accounts.map((a: { account_name: string }) => a.account_name)).toEqual(['mine']);
    });

    it('needs a Bearer key', async () => {
      const res = await request(api.app).get('/v1/accounts');
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('unauthorized');
    });
  });

  describe('presets', () => {
    it('answers {presets: []} before any is created', async () => {
      const { apiKey } = await api.account('pro');
      const res = await presets(apiKey);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ presets: [] });
    });

    it('creates a minimal preset: 201 with exact keys', async () => {
      const { apiKey } = await api.account('pro');
      const res = await createPreset(apiKey, { name: 'Launch', platforms: ['twitter', 'bluesky'] });
      expect(res.status).toBe(201);
      expect(Object.keys(res.body).sort()).toEqual(PRESET_KEYS);
      expect(res.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        name: 'Launch',
        description: null,
        platforms: ['twitter', 'bluesky'],
        defaults: null,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      });
    });

    it('stores description and defaults in the post body shape', async () => {
      const { apiKey } = await api.account('pro');
      const defaults = {
        content: 'Default text',
        media: { images: [{ url: 'https://cdn.example.com/logo.png', alt_text: 'logo' }] },
        segments: [{ content: 'Follow us', media_urls: ['https://cdn.example.com/f.png'] }],
      };
      const res = await createPreset(apiKey, {
        name: 'Everywhere',
        description: 'All the networks',
        platforms: ['facebook', 'instagram', 'tiktok'],
        defaults,
      });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ name: 'Everywhere', description: 'All the networks', defaults });
      const listed = await presets(apiKey);
      expect(listed.body.presets).toEqual([res.body]);
    });

    it('trims the name', async () => {
      const { apiKey } = await api.account('pro');
      const res = await createPreset(apiKey, { name: '  Spaced  ', platforms: ['twitter'] });
      expect(res.status).toBe(201);
      expect(res.body.name).toBe('Spaced');
    });

    it('answers 409 conflict naming name for a duplicate name, also after trimming', async () => {
      const { apiKey } = await api.account('pro');
      expect((await createPreset(apiKey, { name: 'Weekly', platforms: ['twitter'] })).status).toBe(201);
      for (const name of ['Weekly', ' Weekly ']) {
        const res = await createPreset(apiKey, { name, platforms: ['mastodon'] });
        expect(res.status).toBe(409);
        expect(Object.keys(res.body).sort()).toEqual(['code', 'details', 'error']);
        expect(res.body.code).toBe('conflict');
        expect(res.body.details.field).toBe('name');
      }
      expect((await presets(apiKey)).body.presets).toHaveLength(1);
    });

    it('allows the same name in another account', async () => {
      const a = await api.account('pro');
      const b = await api.account('pro');
      expect((await createPreset(a.apiKey, { name: 'Shared', platforms: ['twitter'] })).status).toBe(201);
      expect((await createPreset(b.apiKey, { name: 'Shared', platforms: ['twitter'] })).status).toBe(201);
    });

    it('accepts a name of exactly 100 characters', async () => {
      const { apiKey } = await api.account('pro');
      expect((await createPreset(apiKey, { name: 'n'.repeat(100), platforms: ['twitter'] })).status).toBe(
        201,
      );
    });

    it.each([
      ['a missing name', { platforms: ['twitter'] }, 'name'],
      ['an empty name', { name: '', platforms: ['twitter'] }, 'name'],
      ['a blank name', { name: '   ', platforms: ['twitter'] }, 'name'],
      ['a 101-character name', { name: 'n'.repeat(101), platforms: ['twitter'] }, 'name'],
      ['a numeric name', { name: 5, platforms: ['twitter'] }, 'name'],
      ['missing platforms', { name: 'p' }, 'platforms'],
      ['empty platforms', { name: 'p', platforms: [] }, 'platforms'],
      ['an unknown platform', { name: 'p', platforms: ['twitter', 'friendster'] }, 'platforms.1'],
      ['a duplicate platform', { name: 'p', platforms: ['twitter', 'twitter'] }, 'platforms'],
      [
        'a 501-character description',
        { name: 'p', platforms: ['twitter'], description: 'd'.repeat(501) },
        'description',
      ],
      [
        'defaults with an unknown key',
        { name: 'p', platforms: ['twitter'], defaults: { title: 'x' } },
        'defaults',
      ],
      [
        'defaults with a snake/camel mix-up',
        { name: 'p', platforms: ['twitter'], defaults: { mediaUrls: [] } },
        'defaults',
      ],
      ['defaults as a string', { name: 'p', platforms: ['twitter'], defaults: 'x' }, 'defaults'],
      [
        'defaults with blank content',
        { name: 'p', platforms: ['twitter'], defaults: { content: ' ' } },
        'defaults.content',
      ],
      [
        'defaults with 5 images',
        {
          name: 'p',
          platforms: ['twitter'],
          defaults: {
            media: { images: [1, 2, 3, 4, 5].map((n) => ({ url: `https://cdn.example.com/${n}.png` })) },
          },
        },
        'defaults.media.images',
      ],
      [
        'defaults with 25 segments',
        {
          name: 'p',
          platforms: ['twitter'],
          defaults: { segments: Array.from({ length: 25 }, () => ({ content: 'r' })) },
        },
        'defaults.segments',
      ],
    ])('rejects %s', async (_name, body, field) => {
      const { apiKey } = await api.account('pro');
      expectInvalid(await createPreset(apiKey, body), field);
      expect((await presets(apiKey)).body.presets).toEqual([]);
    });

    it('rejects malformed JSON and non-object bodies naming body', async () => {
      const { apiKey } = await api.account('pro');
      const malformed = await request(api.app)
        .post('/v1/presets')
        .set(bearer(apiKey))
        .set('Content-Type', 'application/json')
        .send('{"name":');
      expect(malformed.status).toBe(400);
      expect(malformed.body.details.field).toBe('body');
      const array = await request(api.app)
        .post('/v1/presets')
        .set(bearer(apiKey))
        .set('Content-Type', 'application/json')
        .send('[]');
      expectInvalid(array, 'body');
    });

    it("lists only the caller's presets, oldest first", async () => {
      const a = await api.account('pro');
      const b = await api.account('pro');
      const first = await createPreset(a.apiKey, { name: 'One', platforms: ['twitter'] });
      await createPreset(b.apiKey, { name: 'Other', platforms: ['twitter'] });
      const second = await createPreset(a.apiKey, { name: 'Two', platforms: ['slack'] });
      const res = await presets(a.apiKey);
      expect(res.status).toBe(200);
      expect(Object.keys(res.body)).toEqual(['presets']);
      expect(res.body.presets.map((p: { id: string }) => p.id)).toEqual([first.body.id, second.body.id]);
      for (const p of res.body.presets) expect(Object.keys(p).sort()).toEqual(PRESET_KEYS);
    });

    it('needs a Bearer key', async () => {
      expect((await request(api.app).get('/v1/presets')).status).toBe(401);
      expect(
        (
          await request(api.app)
            .post('/v1/presets')
            .send({ name: 'x', platforms: ['twitter'] })
        ).status,
      ).toBe(401);
    });
  });
});
