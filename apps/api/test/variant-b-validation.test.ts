import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TPostViewB } from '@sps/core';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';

interface TIssue {
  field: string;
  message: string;
}

const tomorrow = () => new Date(Date.now() + 86_400_000).toISOString();
const img = (n: number) => `https://cdn.example.com/${n}.png`;
const images = (count: number) => Array.from({ length: count }, (_, i) => ({ url: img(i) }));

describe('Variant B validation', () => {
  let api: TTestApi;
  let key: string;

  beforeAll(async () => {
    api = await startTestApi();
    ({ apiKey: key } = await api.account('pro'));
  });
  afterAll(() => api.close());

  const create = (body: unknown) =>
    request(api.app)
      .post('/v1/posts')
      .set(bearer(key))
      .send(body as object);
  const put = (id: string, body: unknown) =>
    request(api.app)
      .put(`/v1/posts/${id}`)
      .set(bearer(key))
      .send(body as object);
  const valid = (extra: Record<string, unknown> = {}) => ({
    content: 'Hello',
    platforms: ['twitter'],
    ...extra,
  });

  async function createOk(body: Record<string, unknown>): Promise<TPostViewB> {
    const res = await create(body);
    expect(res.status).toBe(201);
    return res.body as TPostViewB;
  }

  /** 400 `{error, code: validation_error, details: {field, issues}}` naming `field` (first issue or any issue). */
  function expectInvalid(res: request.Response, field: string, code = 'validation_error') {
    expect(res.status).toBe(400);
    expect(Object.keys(res.body).sort()).toEqual(['code', 'details', 'error']);
    expect(res.body.code).toBe(code);
    expect(typeof res.body.error).toBe('string');
    expect(res.body.error).toContain(field);
    const issues = res.body.details.issues as TIssue[];
    expect(Array.isArray(issues)).toBe(true);
    expect(issues.map((i) => i.field)).toContain(field);
    expect(res.body.details.field).toBe(issues[0]?.field);
    for (const issue of issues) expect(typeof issue.message).toBe('string');
  }

  async function postCount(): Promise<number> {
    return (await request(api.app).get('/v1/posts').set(bearer(key))).body.total as number;
  }

  describe('create: content and platforms', () => {
    it.each([
      ['missing content', { platforms: ['twitter'] }, 'content'],
      ['empty content', { content: '', platforms: ['twitter'] }, 'content'],
      ['blank content', { content: '   \n', platforms: ['twitter'] }, 'content'],
      ['numeric content', { content: 42, platforms: ['twitter'] }, 'content'],
      ['null content', { content: null, platforms: ['twitter'] }, 'content'],
      ['missing platforms', { content: 'x' }, 'platforms'],
      ['empty platforms', { content: 'x', platforms: [] }, 'platforms'],
      ['platforms as a string', { content: 'x', platforms: 'twitter' }, 'platforms'],
      ['unknown platform', { content: 'x', platforms: ['twitter', 'myspace'] }, 'platforms.1'],
      ['platform in wrong case', { content: 'x', platforms: ['Twitter'] }, 'platforms.0'],
      ['non-string platform', { content: 'x', platforms: [7] }, 'platforms.0'],
      ['duplicate platform', { content: 'x', platforms: ['twitter', 'bluesky', 'twitter'] }, 'platforms'],
    ])('rejects %s', async (_name, body, field) => {
      expectInvalid(await create(body), field);
    });

    it('names every problem when several fields are wrong', async () => {
      const res = await create({ content: '', platforms: [] });
      expectInvalid(res, 'content');
      expect((res.body.details.issues as TIssue[]).map((i) => i.field).sort()).toEqual([
        'content',
        'platforms',
      ]);
    });

    it('stores nothing when validation fails', async () => {
      const before = await postCount();
      expect((await create({ content: 'x', platforms: ['nope'] })).status).toBe(400);
      expect(await postCount()).toBe(before);
    });
  });

  describe('create: scheduled_for', () => {
    it('rejects a time in the past', async () => {
      expectInvalid(await create(valid({ scheduled_for: '2020-01-01T00:00:00Z' })), 'scheduled_for');
    });

    it('rejects now', async () => {
      expectInvalid(await create(valid({ scheduled_for: new Date().toISOString() })), 'scheduled_for');
    });

    it.each([
      ['without a timezone offset', '2099-01-01T10:00:00'],
      ['a date only', '2099-01-01'],
      ['garbage', 'tomorrow'],
      ['an impossible date', '2099-02-30T10:00:00Z'],
      ['an impossible hour', '2099-01-01T25:00:00Z'],
      ['an empty string', ''],
    ])('rejects %s', async (_name, value) => {
      expectInvalid(await create(valid({ scheduled_for: value })), 'scheduled_for');
    });

    it.each([
      ['a number', 4102444800000],
      ['an object', { at: '2099-01-01T00:00:00Z' }],
      ['true', true],
    ])('rejects %s', async (_name, value) => {
      expectInvalid(await create(valid({ scheduled_for: value })), 'scheduled_for');
    });

    it('records no event for a rejected schedule', async () => {
      const before = await api.db.event.count({ where: { type: 'post.scheduled' } });
      expect((await create(valid({ scheduled_for: '2001-01-01T00:00:00Z' }))).status).toBe(400);
      expect(await api.db.event.count({ where: { type: 'post.scheduled' } })).toBe(before);
    });
  });

  describe('create: media', () => {
    it('rejects 5 images naming media.images', async () => {
      expectInvalid(await create(valid({ media: { images: images(5) } })), 'media.images');
    });

    it('accepts exactly 4 images', async () => {
      expect((await create(valid({ media: { images: images(4) } }))).status).toBe(201);
    });

    it('rejects a video combined with images', async () => {
      const res = await create(
        valid({ media: { images: images(1), video: { url: 'https://cdn.example.com/v.mp4' } } }),
      );
      expectInvalid(res, 'media.video');
    });

    it.each([
      ['an image URL that is not a URL', { images: [{ url: 'not a url' }] }, 'media.images.0.url'],
      ['a relative image URL', { images: [{ url: '/img/1.png' }] }, 'media.images.0.url'],
      ['an ftp image URL', { images: [{ url: 'ftp://cdn.example.com/1.png' }] }, 'media.images.0.url'],
      ['an image without url', { images: [{ alt_text: 'x' }] }, 'media.images.0.url'],
      ['an image as a bare string', { images: ['https://cdn.example.com/1.png'] }, 'media.images.0'],
      ['images not an array', { images: 'https://cdn.example.com/1.png' }, 'media.images'],
      ['a non-URL video', { video: { url: 'video.mp4' } }, 'media.video.url'],
      [
        'a non-URL thumbnail',
        { video: { url: 'https://cdn.example.com/v.mp4', thumbnail_url: 'x' } },
        'media.video.thumbnail_url',
      ],
      ['a video as a string', { video: 'https://cdn.example.com/v.mp4' }, 'media.video'],
      [
        'alt_text over 1000 characters',
        { images: [{ url: img(1), alt_text: 'a'.repeat(1001) }] },
        'media.images.0.alt_text',
      ],
    ])('rejects %s', async (_name, media, field) => {
      expectInvalid(await create(valid({ media })), field);
    });

    it.each([
      ['a string', 'https://cdn.example.com/1.png'],
      ['an array', [{ url: img(1) }]],
      ['a number', 3],
    ])('rejects media as %s', async (_name, media) => {
      expectInvalid(await create(valid({ media })), 'media');
    });
  });

  describe('create: segments', () => {
    it('rejects 25 segments naming segments', async () => {
      const segments = Array.from({ length: 25 }, (_, i) => ({ content: `r${i}` }));
      expectInvalid(await create(valid({ segments })), 'segments');
    });

    it('accepts 24 segments', async () => {
      const segments = Array.from({ length: 24 }, (_, i) => ({ content: `r${i}` }));
      expect((await create(valid({ segments }))).status).toBe(201);
    });

    it('rejects segment content over 5000 characters naming segments.3.content', async () => {
      const segments = [{ content: 'a' }, { content: 'b' }, { content: 'c' }, { content: 'x'.repeat(5001) }];
      expectInvalid(await create(valid({ segments })), 'segments.3.content');
    });

    it('accepts segment content of exactly 5000 characters, counting emoji as one', async () => {
      const res = await create(
        valid({ segments: [{ content: 'x'.repeat(5000) }, { content: '😀'.repeat(5000) }] }),
      );
      expect(res.status).toBe(201);
    });

    it('rejects a segment of 5001 emoji', async () => {
      expectInvalid(
        await create(valid({ segments: [{ content: '😀'.repeat(5001) }] })),
        'segments.0.content',
      );
    });

    it('rejects a video combined with an image in media_urls', async () => {
      const segments = [{ content: 'r', media_urls: [img(1), 'https://cdn.example.com/clip.mp4'] }];
      expectInvalid(await create(valid({ segments })), 'segments.0.media_urls');
    });

    it('rejects two videos in media_urls', async () => {
      const segments = [
        { content: 'r', media_urls: ['https://cdn.example.com/a.mp4', 'https://cdn.example.com/b.mov'] },
      ];
      expectInvalid(await create(valid({ segments })), 'segments.0.media_urls');
    });

    it('rejects 5 images in media_urls', async () => {
      const segments = [{ content: 'ok' }, { content: 'r', media_urls: [1, 2, 3, 4, 5].map(img) }];
      expectInvalid(await create(valid({ segments })), 'segments.1.media_urls');
    });

    it.each([
      [
        'a non-URL media_url',
        [{ content: 'r', media_urls: ['https://cdn.example.com/1.png', 'nope'] }],
        'segments.0.media_urls.1',
      ],
      ['media_urls as a string', [{ content: 'r', media_urls: img(1) }], 'segments.0.media_urls'],
      ['media_urls of objects', [{ content: 'r', media_urls: [{ url: img(1) }] }], 'segments.0.media_urls.0'],
      ['a segment without content', [{ media_urls: [img(1)] }], 'segments.0.content'],
      ['a blank segment without media', [{ content: 'ok' }, { content: '  ' }], 'segments.1.content'],
      ['a segment as a string', ['reply'], 'segments.0'],
      ['a null segment', [null], 'segments.0'],
    ])('rejects %s', async (_name, segments, field) => {
      expectInvalid(await create(valid({ segments })), field);
    });

    it.each([
      ['an object', { content: 'r' }],
      ['a string', 'reply'],
    ])('rejects segments as %s', async (_name, segments) => {
      expectInvalid(await create(valid({ segments })), 'segments');
    });
  });

  describe('request bodies', () => {
    it('answers malformed JSON with 400 in B shape naming body', async () => {
      const res = await request(api.app)
        .post('/v1/posts')
        .set(bearer(key))
        .set('Content-Type', 'application/json')
        .send('{"content": "x", "platforms": [');
      expect(res.status).toBe(400);
      expect(Object.keys(res.body).sort()).toEqual(['code', 'details', 'error']);
      expect(res.body.details.field).toBe('body');
    });

    it('answers a body over 1 MB with 413 in B shape', async () => {
      const res = await create({ content: 'x'.repeat(1_100_000), platforms: ['facebook'] });
      expect(res.status).toBe(413);
      expect(Object.keys(res.body).sort()).toEqual(['code', 'details', 'error']);
      expect(res.body.code).toBe('payload_too_large');
    });

    it.each([
      ['an array', '[{"content":"x","platforms":["twitter"]}]'],
      ['a string', '"hello"'],
      ['null', 'null'],
      ['a number', '42'],
    ])('answers a JSON body that is %s with 400 naming body', async (_name, raw) => {
      const res = await request(api.app)
        .post('/v1/posts')
        .set(bearer(key))
        .set('Content-Type', 'application/json')
        .send(raw);
      expect(res.status).toBe(400);
      expect(Object.keys(res.body).sort()).toEqual(['code', 'details', 'error']);
      expect(res.body.details.field).toBe('body');
    });

    it('answers a missing body or a non-JSON content type with 400 naming body', async () => {
      expectInvalid(await request(api.app).post('/v1/posts').set(bearer(key)), 'body');
      const text = await request(api.app)
        .post('/v1/posts')
        .set(bearer(key))
        .set('Content-Type', 'text/plain')
        .send('content=x');
      expectInvalid(text, 'body');
    });

    it('applies the same body rules to PUT', async () => {
      const post = await createOk(valid());
      const malformed = await request(api.app)
        .put(`/v1/posts/${post.id}`)
        .set(bearer(key))
        .set('Content-Type', 'application/json')
        .send('{oops');
      expect(malformed.status).toBe(400);
      expect(malformed.body.details.field).toBe('body');
      const array = await request(api.app)
        .put(`/v1/posts/${post.id}`)
        .set(bearer(key))
        .set('Content-Type', 'application/json')
        .send('[]');
      expectInvalid(array, 'body');
      const big = await put(post.id, { content: 'x'.repeat(1_100_000) });
      expect(big.status).toBe(413);
    });
  });

  describe('update validation', () => {
    it.each([
      ['blank content', { content: '  ' }, 'content'],
      ['null content', { content: null }, 'content'],
      ['empty platforms', { platforms: [] }, 'platforms'],
      ['null platforms', { platforms: null }, 'platforms'],
      ['unknown platform', { platforms: ['orkut'] }, 'platforms.0'],
      ['duplicate platform', { platforms: ['slack', 'slack'] }, 'platforms'],
      ['a past scheduled_for', { scheduled_for: '2001-01-01T00:00:00Z' }, 'scheduled_for'],
      ['scheduled_for without offset', { scheduled_for: '2099-01-01T00:00:00' }, 'scheduled_for'],
      ['5 images', { media: { images: images(5) } }, 'media.images'],
      [
        'video with images',
        { media: { images: images(2), video: { url: 'https://x.example/v.mp4' } } },
        'media.video',
      ],
      ['25 segments', { segments: Array.from({ length: 25 }, () => ({ content: 'r' })) }, 'segments'],
      [
        'a long segment',
        { segments: [{ content: 'a' }, { content: 'b'.repeat(5001) }] },
        'segments.1.content',
      ],
    ])('rejects %s and leaves the post unchanged', async (_name, body, field) => {
      const post = await createOk(valid({ segments: [{ content: 'keep' }] }));
      expectInvalid(await put(post.id, body), field);
      const after = await request(api.app).get(`/v1/posts/${post.id}`).set(bearer(key));
      expect(after.body).toEqual(post);
    });
  });

  describe('list query', () => {
    it.each([
      ['status=bogus', 'status'],
      ['status=DRAFT', 'status'],
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=abc', 'limit'],
      ['limit=-1', 'limit'],
      ['limit=1.5', 'limit'],
      ['limit=5&limit=6', 'limit'],
      ['offset=-1', 'offset'],
      ['offset=abc', 'offset'],
      ['offset=0.5', 'offset'],
    ])('rejects ?%s naming the parameter', async (query, field) => {
      expectInvalid(await request(api.app).get(`/v1/posts?${query}`).set(bearer(key)), field);
    });

    it('accepts limit=1 and limit=100', async () => {
      await createOk(valid());
      await createOk(valid());
      const one = await request(api.app).get('/v1/posts?limit=1').set(bearer(key));
      expect(one.status).toBe(200);
      expect(one.body.posts).toHaveLength(1);
      expect((await request(api.app).get('/v1/posts?limit=100').set(bearer(key))).status).toBe(200);
    });
  });

  describe('boundaries that are accepted', () => {
    it('accepts a scheduled_for a minute ahead with a negative offset', async () => {
      const at = new Date(Date.now() + 60_000 + 5 * 3_600_000);
      const local = `${at.toISOString().slice(0, 19)}-05:00`;
      const post = await createOk(valid({ scheduled_for: local }));
      expect(post.status).toBe('scheduled');
      expect(new Date(post.scheduled_for ?? '').getTime()).toBe(new Date(local).getTime());
    });

    it('accepts a far-future scheduled_for', async () => {
      expect((await create(valid({ scheduled_for: tomorrow() }))).status).toBe(201);
      expect((await create(valid({ scheduled_for: '9999-12-31T23:59:59Z' }))).status).toBe(201);
    });

    it('accepts segment content that is empty when media_urls is given', async () => {
      const post = await createOk(valid({ segments: [{ content: '', media_urls: [img(1)] }] }));
      expect(post.segments).toEqual([{ content: '', media_urls: [img(1)] }]);
    });
  });
});
