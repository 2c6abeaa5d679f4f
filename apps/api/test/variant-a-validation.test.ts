import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
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

/** Variant A error: exact status, `{error, fix?, details?}` only, and (when given) the field named. */
function expectErrorA(res: Response, status: number, field?: string): TErrorBodyA {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const body = res.body as TErrorBodyA;
  expect(typeof body.error).toBe('string');
  expect(body.error.length).toBeGreaterThan(0);
  for (const key of Object.keys(body)) expect(['error', 'fix', 'details']).toContain(key);
  if (body.fix !== undefined) expect(typeof body.fix).toBe('string');
  if (field !== undefined) {
    expect(body.error).toContain(field);
    expect(body.details?.issues?.map((i) => i.field)).toContain(field);
  }
  return body;
}

const URL_1000 = `https://example.com/${'a'.repeat(980)}`;
/** 5000 characters made of five links, so every network's own limit is met (links weigh 23). */
const LINKS_5000 = [URL_1000, URL_1000, URL_1000, URL_1000, URL_1000.slice(0, 996)].join(' ');
/** 5001 characters, otherwise the same. */
const LINKS_5001 = [URL_1000, URL_1000, URL_1000, URL_1000, URL_1000.slice(0, 997)].join(' ');
const FUTURE = '2099-06-01T10:00:00Z';

describe('Variant A validation (POST /api/posts)', () => {
  let api: TTestApi;
  let key: string;
  const base = { content: 'hello world', platforms: ['twitter'] };

  beforeAll(async () => {
    api = await startTestApi();
    ({ apiKey: key } = await api.account('pro'));
  });
  afterAll(() => api.close());

  const create = (body: unknown) =>
    request(api.app)
      .post('/api/posts')
      .set(bearer(key))
      .send(body as object);
  const ok = async (body: unknown) => {
    const res = await create(body);
    expect(res.status).toBe(201);
    expect(res.body.success).toBe(true);
    return res.body.post as Record<string, unknown>;
  };

  describe('content', () => {
    it('rejects a missing content naming content', async () => {
      expectErrorA(await create({ platforms: ['twitter'] }), 400, 'content');
    });
    it('rejects 0 characters and blank text', async () => {
      expectErrorA(await create({ ...base, content: '' }), 400, 'content');
      expectErrorA(await create({ ...base, content: '   \n\t ' }), 400, 'content');
    });
    it('accepts 1 character', async () => {
      expect((await ok({ ...base, content: 'x' })).content).toBe('x');
    });
    it('accepts 5000 characters and rejects 5001 (links keep the network limit out of the way)', async () => {
      expect(LINKS_5000.length).toBe(5000);
      expect(LINKS_5001.length).toBe(5001);
      expect((await ok({ content: LINKS_5000, platforms: ['twitter', 'mastodon'] })).content).toBe(
        LINKS_5000,
      );
      const body = expectErrorA(
        await create({ content: LINKS_5001, platforms: ['twitter'] }),
        400,
        'content',
      );
      expect(body.error).toMatch(/5000/);
    });
    it('counts characters as code points, not UTF-16 units', async () => {
      // 140 emoji = 280 UTF-16 units and 140 code points; twitter weighs each 2, so 280.
      expect((await ok({ content: '😀'.repeat(140), platforms: ['twitter'] })).content).toBe(
        '😀'.repeat(140),
      );
    });
    it('rejects a non-string content', async () => {
      expectErrorA(await create({ ...base, content: 42 }), 400, 'content');
      expectErrorA(await create({ ...base, content: null }), 400, 'content');
    });
    it('rejects a NUL character or an unpaired surrogate instead of failing in the database', async () => {
      expectErrorA(await create({ ...base, content: 'a\u0000b' }), 400, 'content');
      expectErrorA(await create({ ...base, content: 'a\udc00b' }), 400, 'content');
      // A well-formed pair is fine.
      expect((await ok({ ...base, content: 'a\ud83d\ude00b' })).content).toBe('a😀b');
    });
  });

  describe('platforms', () => {
    it('rejects a missing or empty list', async () => {
      expectErrorA(await create({ content: 'x' }), 400, 'platforms');
      expectErrorA(await create({ content: 'x', platforms: [] }), 400, 'platforms');
    });
    it('rejects identifiers outside Variant A, naming the item', async () => {
      const body = expectErrorA(await create({ content: 'x', platforms: ['instagram'] }), 400, 'platforms.0');
      expect(body.error).toMatch(/twitter/);
      expectErrorA(await create({ content: 'x', platforms: ['twitter', 'Twitter'] }), 400, 'platforms.1');
      expectErrorA(await create({ content: 'x', platforms: ['telegram'] }), 400, 'platforms.0');
    });
    it('rejects duplicates', async () => {
      expectErrorA(await create({ content: 'x', platforms: ['twitter', 'twitter'] }), 400, 'platforms');
    });
    it('rejects a non-array', async () => {
      expectErrorA(await create({ content: 'x', platforms: 'twitter' }), 400, 'platforms');
    });
    it('accepts each of the five identifiers together', async () => {
      const all = ['twitter', 'threads', 'bluesky', 'linkedin', 'mastodon'];
      expect((await ok({ content: 'x', platforms: all })).platforms).toEqual(all);
    });
  });

  describe('scheduledFor', () => {
    it('rejects a date-time without an offset, naming scheduledFor', async () => {
      const body = expectErrorA(
        await create({ ...base, scheduledFor: '2099-06-01T10:00:00' }),
        400,
        'scheduledFor',
      );
      expect(body.error).toMatch(/offset/i);
      expectErrorA(await create({ ...base, scheduledFor: '2099-06-01' }), 400, 'scheduledFor');
    });
    it('rejects garbage, numbers and impossible dates', async () => {
      expectErrorA(await create({ ...base, scheduledFor: 'tomorrow' }), 400, 'scheduledFor');
      expectErrorA(await create({ ...base, scheduledFor: 4102444800000 }), 400, 'scheduledFor');
      expectErrorA(await create({ ...base, scheduledFor: '2099-02-30T10:00:00Z' }), 400, 'scheduledFor');
    });
    it('rejects a time in the past', async () => {
      const body = expectErrorA(
        await create({ ...base, scheduledFor: '2020-01-01T00:00:00Z' }),
        400,
        'scheduledFor',
      );
      expect(body.error).toMatch(/future/);
    });
    it('accepts Z and +02:00 and returns the same instant', async () => {
      expect((await ok({ ...base, scheduledFor: FUTURE })).scheduledFor).toBe('2099-06-01T10:00:00.000Z');
      const post = await ok({ ...base, scheduledFor: '2099-06-01T12:00:00+02:00' });
      expect(new Date(post.scheduledFor as string).toISOString()).toBe('2099-06-01T10:00:00.000Z');
    });
    it('accepts null as not scheduled', async () => {
      expect((await ok({ ...base, scheduledFor: null })).scheduledFor).toBeNull();
    });
    it('cannot be combined with queueStatus', async () => {
      expectErrorA(
        await create({ ...base, scheduledFor: FUTURE, queueStatus: 'queued' }),
        400,
        'queueStatus',
      );
    });
  });

  describe('published and queueStatus', () => {
    it('rejects a non-boolean published', async () => {
      expectErrorA(await create({ ...base, published: 'true' }), 400, 'published');
      expectErrorA(await create({ ...base, published: 1 }), 400, 'published');
      expectErrorA(await create({ ...base, published: null }), 400, 'published');
    });
    it('accepts published false as a draft', async () => {
      expect((await ok({ ...base, published: false })).published).toBe(false);
    });
    it('answers 400 naming platforms for published true without a connected account, and stores nothing', async () => {
      const before = await request(api.app).get('/api/posts').set(bearer(key));
      const body = expectErrorA(await create({ ...base, published: true }), 400, 'platforms');
      expect(body.fix).toEqual(expect.any(String));
      const after = await request(api.app).get('/api/posts').set(bearer(key));
      expect(after.body.posts.length).toBe(before.body.posts.length);
    });
    it('rejects published true combined with a schedule or the queue', async () => {
      expectErrorA(await create({ ...base, published: true, scheduledFor: FUTURE }), 400, 'published');
      expectErrorA(await create({ ...base, published: true, queueStatus: 'queued' }), 400, 'published');
    });
    it('accepts queued, pending and null', async () => {
      expect((await ok({ ...base, queueStatus: 'queued' })).queueStatus).toBe('queued');
      expect((await ok({ ...base, queueStatus: 'pending' })).queueStatus).toBe('pending');
      expect((await ok({ ...base, queueStatus: null })).queueStatus).toBeNull();
    });
    it('rejects other queueStatus values', async () => {
      expectErrorA(await create({ ...base, queueStatus: 'published' }), 400, 'queueStatus');
      expectErrorA(await create({ ...base, queueStatus: 'QUEUED' }), 400, 'queueStatus');
      expectErrorA(await create({ ...base, queueStatus: '' }), 400, 'queueStatus');
      expectErrorA(await create({ ...base, queueStatus: true }), 400, 'queueStatus');
    });
  });

  describe('snake_case aliases', () => {
    it('accepts scheduled_for, queue_status and media', async () => {
      expect((await ok({ ...base, scheduled_for: FUTURE })).scheduledFor).toBe('2099-06-01T10:00:00.000Z');
      expect((await ok({ ...base, queue_status: 'pending' })).queueStatus).toBe('pending');
      const post = await ok({ ...base, media: ['https://cdn.example.com/a.png'] });
      expect(post.mediaUrls).toEqual([{ url: 'https://cdn.example.com/a.png' }]);
    });
    it('names the alias when it is the invalid one', async () => {
      expectErrorA(await create({ ...base, scheduled_for: '2099-06-01T10:00:00' }), 400, 'scheduled_for');
      expectErrorA(await create({ ...base, scheduled_for: '2020-06-01T10:00:00Z' }), 400, 'scheduled_for');
      expectErrorA(await create({ ...base, queue_status: 'later' }), 400, 'queue_status');
      expectErrorA(await create({ ...base, media: ['not a url'] }), 400, 'media.0.url');
    });
    it('rejects an alias that conflicts with the camelCase name', async () => {
      expectErrorA(
        await create({ ...base, scheduledFor: FUTURE, scheduled_for: '2099-07-01T10:00:00Z' }),
        400,
        'scheduledFor',
      );
      expectErrorA(await create({ ...base, scheduledFor: null, scheduled_for: FUTURE }), 400, 'scheduledFor');
      expectErrorA(
        await create({ ...base, queueStatus: 'queued', queue_status: 'pending' }),
        400,
        'queueStatus',
      );
      expectErrorA(
        await create({
          ...base,
          mediaUrls: ['https://cdn.example.com/a.png'],
          media: ['https://cdn.example.com/b.png'],
        }),
        400,
        'mediaUrls',
      );
    });
    it('accepts an alias that agrees with the camelCase name', async () => {
      const post = await ok({ ...base, scheduledFor: FUTURE, scheduled_for: '2099-06-01T12:00:00+02:00' });
      expect(post.scheduledFor).toBe('2099-06-01T10:00:00.000Z');
    });
  });

  describe('mediaUrls', () => {
    const img = (i: number) => `https://cdn.example.com/${i}.png`;
    it('accepts 4 items and rejects 5', async () => {
      const four = [1, 2, 3, 4].map(img);
      expect((await ok({ ...base, mediaUrls: four })).mediaUrls).toEqual(four.map((url) => ({ url })));
      expectErrorA(await create({ ...base, mediaUrls: [1, 2, 3, 4, 5].map(img) }), 400, 'mediaUrls');
    });
    it('accepts strings and {url, altText} objects mixed', async () => {
      const post = await ok({
        ...base,
        mediaUrls: [img(1), { url: img(2), altText: 'a cat' }, { url: img(3) }],
      });
      expect(post.mediaUrls).toEqual([{ url: img(1) }, { url: img(2), altText: 'a cat' }, { url: img(3) }]);
    });
    it('accepts altText of 1000 characters and rejects 1001', async () => {
      const post = await ok({ ...base, mediaUrls: [{ url: img(1), altText: 'a'.repeat(1000) }] });
      expect((post.mediaUrls as { altText: string }[])[0]?.altText).toHaveLength(1000);
      expectErrorA(
        await create({ ...base, mediaUrls: [{ url: img(1), altText: 'a'.repeat(1001) }] }),
        400,
        'mediaUrls.0.altText',
      );
    });
    it('rejects non-URLs, missing url, non-http schemes and wrong types', async () => {
      expectErrorA(await create({ ...base, mediaUrls: ['not a url'] }), 400, 'mediaUrls.0.url');
      expectErrorA(
        await create({ ...base, mediaUrls: [img(1), 'ftp://x.example/a.png'] }),
        400,
        'mediaUrls.1.url',
      );
      expectErrorA(await create({ ...base, mediaUrls: [{ altText: 'no url' }] }), 400, 'mediaUrls.0.url');
      expectErrorA(await create({ ...base, mediaUrls: [42] }), 400, 'mediaUrls.0');
      expectErrorA(await create({ ...base, mediaUrls: img(1) }), 400, 'mediaUrls');
      expectErrorA(
        await create({ ...base, mediaUrls: [{ url: img(1), altText: 5 }] }),
        400,
        'mediaUrls.0.altText',
      );
    });
    it('rejects a video combined with images', async () => {
      expectErrorA(
        await create({ ...base, mediaUrls: [img(1), 'https://cdn.example.com/clip.mp4'] }),
        400,
        'mediaUrls',
      );
    });
    it('rejects NUL characters in URLs and alt text instead of failing in the database', async () => {
      expectErrorA(
        await create({ ...base, mediaUrls: ['https://cdn.example.com/a\u0000.png'] }),
        400,
        'mediaUrls.0.url',
      );
      expectErrorA(
        await create({ ...base, mediaUrls: [{ url: img(1), altText: 'a\u0000' }] }),
        400,
        'mediaUrls.0.altText',
      );
      expectErrorA(
        await create({ ...base, mediaUrls: [{ url: img(1), altText: '\ud800' }] }),
        400,
        'mediaUrls.0.altText',
      );
    });
  });

  describe('segments', () => {
    const seg = (content: string) => ({ content });
    it('accepts 24 replies and rejects 25', async () => {
      const post = await ok({ ...base, segments: Array.from({ length: 24 }, (_, i) => seg(`reply ${i}`)) });
      expect(post.segments).toHaveLength(24);
      expectErrorA(
        await create({ ...base, segments: Array.from({ length: 25 }, (_, i) => seg(`reply ${i}`)) }),
        400,
        'segments',
      );
    });
    it('accepts segment content of 5000 characters and rejects 0 and 5001', async () => {
      const post = await ok({ ...base, segments: [seg(LINKS_5000)] });
      expect((post.segments as { content: string }[])[0]?.content).toBe(LINKS_5000);
      expectErrorA(await create({ ...base, segments: [seg('ok'), seg('')] }), 400, 'segments.1.content');
      expectErrorA(await create({ ...base, segments: [seg('  ')] }), 400, 'segments.0.content');
      expectErrorA(await create({ ...base, segments: [seg(LINKS_5001)] }), 400, 'segments.0.content');
    });
    it('rejects malformed segments', async () => {
      expectErrorA(await create({ ...base, segments: ['text'] }), 400, 'segments.0');
      expectErrorA(await create({ ...base, segments: [{}] }), 400, 'segments.0.content');
      expectErrorA(await create({ ...base, segments: { content: 'x' } }), 400, 'segments');
      expectErrorA(
        await create({ ...base, segments: [{ content: 'x', mediaUrls: ['nope'] }] }),
        400,
        'segments.0.mediaUrls.0.url',
      );
    });
    it('keeps segment media in both forms', async () => {
      const post = await ok({
        ...base,
        segments: [
          {
            content: 'r',
            mediaUrls: [
              'https://cdn.example.com/1.png',
              { url: 'https://cdn.example.com/2.png', altText: 'x' },
            ],
          },
        ],
      });
      expect(post.segments).toEqual([
        {
          content: 'r',
          mediaUrls: [
            { url: 'https://cdn.example.com/1.png' },
            { url: 'https://cdn.example.com/2.png', altText: 'x' },
          ],
        },
      ]);
    });
    it('rejects a NUL character or an unpaired surrogate in a segment', async () => {
      expectErrorA(await create({ ...base, segments: [seg('a\u0000')] }), 400, 'segments.0.content');
      expectErrorA(await create({ ...base, segments: [seg('a\ud800b')] }), 400, 'segments.0.content');
    });
  });

  describe('poll', () => {
    const poll = (options: unknown, durationMinutes: unknown = 60) => ({
      ...base,
      poll: { options, durationMinutes },
    });
    it('accepts 2 and 4 options, rejects 1 and 5', async () => {
      expect((await ok(poll(['a', 'b']))).poll).toEqual({ options: ['a', 'b'], durationMinutes: 60 });
      expect((await ok(poll(['a', 'b', 'c', 'd']))).poll).toEqual({
        options: ['a', 'b', 'c', 'd'],
        durationMinutes: 60,
      });
      expectErrorA(await create(poll(['a'])), 400, 'poll.options');
      expectErrorA(await create(poll(['a', 'b', 'c', 'd', 'e'])), 400, 'poll.options');
    });
    it('accepts an option of 25 characters and rejects 26', async () => {
      await ok(poll(['a'.repeat(25), 'b']));
      expectErrorA(await create(poll(['a', 'b'.repeat(26)])), 400, 'poll.options.1');
      expectErrorA(await create(poll(['a', ' '])), 400, 'poll.options.1');
      expectErrorA(await create(poll(['a', 7])), 400, 'poll.options.1');
      expectErrorA(await create(poll(['a', 'b\u0000'])), 400, 'poll.options.1');
      expectErrorA(await create(poll(['a\ud800', 'b'])), 400, 'poll.options.0');
    });
    it('accepts durationMinutes 5 and 10080, rejects 4, 10081 and non-integers', async () => {
      await ok(poll(['a', 'b'], 5));
      await ok(poll(['a', 'b'], 10080));
      expectErrorA(await create(poll(['a', 'b'], 4)), 400, 'poll.durationMinutes');
      expectErrorA(await create(poll(['a', 'b'], 10081)), 400, 'poll.durationMinutes');
      expectErrorA(await create(poll(['a', 'b'], 60.5)), 400, 'poll.durationMinutes');
      expectErrorA(await create(poll(['a', 'b'], '60')), 400, 'poll.durationMinutes');
    });
    it('rejects a poll that is not an object or lacks fields', async () => {
      expectErrorA(await create({ ...base, poll: ['a', 'b'] }), 400, 'poll');
      expectErrorA(await create({ ...base, poll: { options: ['a', 'b'] } }), 400, 'poll.durationMinutes');
    });
    it('rejects a poll on a network without polls, naming the network', async () => {
      const body = expectErrorA(
        await create({
          content: 'x',
          platforms: ['bluesky'],
          poll: { options: ['a', 'b'], durationMinutes: 60 },
        }),
        400,
        'poll',
      );
      expect(body.error).toMatch(/bluesky/);
      expectErrorA(
        await create({
          content: 'x',
          platforms: ['twitter', 'linkedin'],
          poll: { options: ['a', 'b'], durationMinutes: 60 },
        }),
        400,
        'poll',
      );
    });
    it('accepts a poll on twitter and mastodon, and poll null', async () => {
      await ok({
        content: 'x',
        platforms: ['twitter', 'mastodon'],
        poll: { options: ['a', 'b'], durationMinutes: 60 },
      });
      expect((await ok({ ...base, poll: null })).poll).toBeNull();
    });
  });

  describe('network text limits', () => {
    it('twitter: 280 weighted is fine, 281 is a 400 naming twitter', async () => {
      await ok({ content: 'a'.repeat(280), platforms: ['twitter'] });
      const body = expectErrorA(
        await create({ content: 'a'.repeat(281), platforms: ['twitter'] }),
        400,
        'content',
      );
      expect(body.error).toMatch(/twitter/);
      expect(body.error).toMatch(/280/);
    });
    it('twitter: CJK characters weigh 2', async () => {
      await ok({ content: '日'.repeat(140), platforms: ['twitter'] });
      expectErrorA(await create({ content: '日'.repeat(141), platforms: ['twitter'] }), 400, 'content');
    });
    it('twitter: a long link counts 23', async () => {
      const link = `https://example.com/${'x'.repeat(200)}`;
      await ok({ content: `${link} ${'a'.repeat(256)}`, platforms: ['twitter'] });
      const body = expectErrorA(
        await create({ content: `${link} ${'a'.repeat(257)}`, platforms: ['twitter'] }),
        400,
        'content',
      );
      expect(body.error).toMatch(/twitter/);
    });
    it('twitter: a segment over the limit is named segments.N.content', async () => {
      const body = expectErrorA(
        await create({
          content: 'a',
          platforms: ['twitter'],
          segments: [{ content: 'ok' }, { content: 'b'.repeat(281) }],
        }),
        400,
        'segments.1.content',
      );
      expect(body.error).toMatch(/twitter/);
    });
    it('bluesky: 300 fine, 301 a 400 naming bluesky', async () => {
      await ok({ content: 'a'.repeat(300), platforms: ['bluesky'] });
      const body = expectErrorA(
        await create({ content: 'a'.repeat(301), platforms: ['bluesky'] }),
        400,
        'content',
      );
      expect(body.error).toMatch(/bluesky/);
    });
    it('mastodon: 500 fine, 501 a 400 naming mastodon', async () => {
      await ok({ content: 'a'.repeat(500), platforms: ['mastodon'] });
      const body = expectErrorA(
        await create({ content: 'a'.repeat(501), platforms: ['mastodon'] }),
        400,
        'content',
      );
      expect(body.error).toMatch(/mastodon/);
    });
    it('the tightest network wins when several are targeted', async () => {
      const body = expectErrorA(
        await create({ content: 'a'.repeat(290), platforms: ['mastodon', 'twitter'] }),
        400,
        'content',
      );
      expect(body.error).toMatch(/twitter/);
    });
  });

  describe('the body itself', () => {
    it('answers malformed JSON with a 400 in A shape', async () => {
      const res = await request(api.app)
        .post('/api/posts')
        .set(bearer(key))
        .set('Content-Type', 'application/json')
        .send('{"content": "x", "platforms": [');
      const body = expectErrorA(res, 400, 'body');
      expect(body.fix).toEqual(expect.any(String));
    });
    it('answers a body over 1 MB with a 413 in A shape', async () => {
      const res = await request(api.app)
        .post('/api/posts')
        .set(bearer(key))
        .set('Content-Type', 'application/json')
        .send(JSON.stringify({ content: 'a'.repeat(1_100_000), platforms: ['twitter'] }));
      expectErrorA(res, 413);
    });
    it('answers a non-JSON content type with a 400 naming the body', async () => {
      const text = await request(api.app)
        .post('/api/posts')
        .set(bearer(key))
        .set('Content-Type', 'text/plain')
        .send(JSON.stringify(base));
      expectErrorA(text, 400, 'body');
      const form = await request(api.app)
        .post('/api/posts')
        .set(bearer(key))
        .type('form')
        .send('content=x&platforms=twitter');
      expectErrorA(form, 400, 'body');
      const none = await request(api.app).post('/api/posts').set(bearer(key));
      expectErrorA(none, 400);
    });
    it('accepts application/json with a charset and +json types', async () => {
      const res = await request(api.app)
        .post('/api/posts')
        .set(bearer(key))
        .set('Content-Type', 'application/json; charset=utf-8')
        .send(JSON.stringify(base));
      expect(res.status).toBe(201);
    });
    it('rejects an unsupported charset without a 5xx', async () => {
      const res = await request(api.app)
        .post('/api/posts')
        .set(bearer(key))
        .set('Content-Type', 'application/json; charset=koi8-r')
        .send(JSON.stringify(base));
      expect([400, 415]).toContain(res.status);
      expectErrorA(res, res.status);
    });
    it.each([
      ['an array', '[]'],
      ['a string', '"hello"'],
      ['null', 'null'],
      ['a number', '42'],
      ['an empty body', ''],
    ])('answers %s as the body with a 400 in A shape', async (_label, raw) => {
      const res = await request(api.app)
        .post('/api/posts')
        .set(bearer(key))
        .set('Content-Type', 'application/json')
        .send(raw);
      expectErrorA(res, 400);
    });
    it('reports several problems at once, the first in the message', async () => {
      const body = expectErrorA(await create({ content: '', platforms: [] }), 400, 'content');
      expect(body.details?.issues?.map((i) => i.field)).toEqual(
        expect.arrayContaining(['content', 'platforms']),
      );
    });
  });
});
