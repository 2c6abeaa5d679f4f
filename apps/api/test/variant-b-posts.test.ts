import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PLATFORMS, type TPostStatus, type TPostViewB } from '@sps/core';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';

const POST_KEYS = [
  'content',
  'created_at',
  'id',
  'media',
  'platform_results',
  'platforms',
  'published_at',
  'scheduled_for',
  'segments',
  'status',
  'updated_at',
];

const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString();
const tomorrow = () => new Date(Date.now() + 86_400_000).toISOString();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('Variant B posts (/v1/posts)', () => {
  let api: TTestApi;
  let key: string;
  let accountId: string;
  let otherKey: string;

  beforeAll(async () => {
    api = await startTestApi();
    ({ apiKey: key, accountId } = await api.account('pro'));
    ({ apiKey: otherKey } = await api.account('pro'));
  });
  afterAll(() => api.close());

  const create = (body: unknown, apiKey = key) =>
    request(api.app)
      .post('/v1/posts')
      .set(bearer(apiKey))
      .send(body as object);
  const get = (id: string, apiKey = key) => request(api.app).get(`/v1/posts/${id}`).set(bearer(apiKey));
  const put = (id: string, body: unknown, apiKey = key) =>
    request(api.app)
      .put(`/v1/posts/${id}`)
      .set(bearer(apiKey))
      .send(body as object);
  const list = (query: string, apiKey = key) => request(api.app).get(`/v1/posts${query}`).set(bearer(apiKey));

  async function createOk(body: Record<string, unknown>, apiKey = key): Promise<TPostViewB> {
    const res = await create(body, apiKey);
    expect(res.status).toBe(201);
    return res.body as TPostViewB;
  }

  async function scheduledEventsFor(postId: string) {
    const events = await api.db.event.findMany({
      where: { type: 'post.scheduled' },
      orderBy: { createdAt: 'asc' },
    });
    return events.filter((e) => (e.data as { post?: { id?: string } }).post?.id === postId);
  }

  async function setStatus(id: string, status: TPostStatus) {
    await api.db.post.update({ where: { id }, data: { status } });
  }

  function expectNotFound(res: request.Response) {
    expect(res.status).toBe(404);
    expect(Object.keys(res.body).sort()).toEqual(['code', 'details', 'error']);
    expect(res.body.code).toBe('not_found');
    expect(typeof res.body.error).toBe('string');
    expect(typeof res.body.details).toBe('object');
    expect(res.body.details).not.toBeNull();
  }

  describe('create', () => {
    it('returns 201 with the full draft Post object, exact snake_case keys', async () => {
      const res = await create({ content: 'Hello world', platforms: ['twitter', 'bluesky'] });
      expect(res.status).toBe(201);
      expect(Object.keys(res.body).sort()).toEqual(POST_KEYS);
      expect(res.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        content: 'Hello world',
        platforms: ['twitter', 'bluesky'],
        status: 'draft',
        scheduled_for: null,
        media: null,
        segments: null,
        platform_results: null,
        created_at: expect.any(String),
        updated_at: expect.any(String),
        published_at: null,
      });
      expect(new Date(res.body.created_at).toISOString()).toBe(res.body.created_at);
      expect(new Date(res.body.updated_at).toISOString()).toBe(res.body.updated_at);
    });

    it('creates a scheduled post when scheduled_for is in the future and records post.scheduled', async () => {
      const when = tomorrow();
      const post = await createOk({ content: 'Later', platforms: ['mastodon'], scheduled_for: when });
      expect(post.status).toBe('scheduled');
      expect(post.scheduled_for).toBe(when);
      const events = await scheduledEventsFor(post.id);
      expect(events).toHaveLength(1);
      const [event] = events;
      expect(event?.accountId).toBe(accountId);
      const data = event?.data as { post: TPostViewB };
      expect(data.post.id).toBe(post.id);
      expect(data.post.status).toBe('scheduled');
      expect(data.post.scheduled_for).toBe(when);
    });

    it('accepts a timezone offset and returns the instant in UTC', async () => {
      const post = await createOk({
        content: 'Offset',
        platforms: ['twitter'],
        scheduled_for: '2099-06-01T09:30:00+02:00',
      });
      expect(post.status).toBe('scheduled');
      expect(post.scheduled_for).toBe('2099-06-01T07:30:00.000Z');
    });

    it('records no post.scheduled event for a draft', async () => {
      const post = await createOk({ content: 'Just a draft', platforms: ['twitter'] });
      expect(await scheduledEventsFor(post.id)).toHaveLength(0);
    });

    it.each(PLATFORMS.map((p) => [p]))('accepts platform %s', async (platform) => {
      const post = await createOk({ content: `on ${platform}`, platforms: [platform] });
      expect(post.platforms).toEqual([platform]);
    });

    it('accepts all 12 platforms at once, keeping their order', async () => {
      const all = [...PLATFORMS].reverse();
      const post = await createOk({ content: 'everywhere', platforms: all });
      expect(post.platforms).toEqual(all);
      expect(all).toHaveLength(12);
    });

    it('stores up to 4 images with optional alt_text', async () => {
      const images = [
        { url: 'https://cdn.example.com/1.png', alt_text: 'first' },
        { url: 'https://cdn.example.com/2.jpg' },
        { url: 'https://cdn.example.com/3.gif', alt_text: '' },
        { url: 'http://cdn.example.com/4.webp', alt_text: 'fourth' },
      ];
      const post = await createOk({ content: 'pics', platforms: ['bluesky'], media: { images } });
      expect(post.media).toEqual({ images, video: null });
      expect((await get(post.id)).body.media).toEqual({ images, video: null });
    });

    it('stores one video with an optional thumbnail_url', async () => {
      const video = {
        url: 'https://cdn.example.com/clip.mp4',
        thumbnail_url: 'https://cdn.example.com/clip.jpg',
      };
      const post = await createOk({ content: 'clip', platforms: ['youtube'], media: { video } });
      expect(post.media).toEqual({ images: [], video });
      const bare = await createOk({
        content: 'clip',
        platforms: ['tiktok'],
        media: { images: [], video: { url: video.url } },
      });
      expect(bare.media).toEqual({ images: [], video: { url: video.url } });
    });

    it('accepts media: null and empty media as no media', async () => {
      expect((await createOk({ content: 'a', platforms: ['twitter'], media: null })).media).toBeNull();
      expect((await createOk({ content: 'b', platforms: ['twitter'], media: {} })).media).toBeNull();
      expect(
        (await createOk({ content: 'c', platforms: ['twitter'], media: { images: [], video: null } })).media,
      ).toBeNull();
    });

    it('stores a thread of 24 segments with media_urls (images or one video)', async () => {
      const segments = Array.from({ length: 24 }, (_, i) => ({
        content: `reply ${i + 1}`,
        media_urls: [] as string[],
      }));
      segments[0] = {
        content: 'with images',
        media_urls: ['https://cdn.example.com/a.png', 'https://cdn.example.com/b.png'],
      };
      segments[1] = { content: 'with video', media_urls: ['https://cdn.example.com/v.mp4'] };
      segments[2] = {
        content: 'four images',
        media_urls: [1, 2, 3, 4].map((n) => `https://cdn.example.com/${n}.jpg`),
      };
      segments[3] = { content: 'x'.repeat(5000), media_urls: [] };
      const post = await createOk({ content: 'Thread start', platforms: ['twitter', 'threads'], segments });
      expect(post.segments).toEqual(segments);
      expect((await get(post.id)).body.segments).toEqual(segments);
    });

    it('returns segments without media_urls as an empty list', async () => {
      const post = await createOk({
        content: 'main',
        platforms: ['bluesky'],
        segments: [{ content: 'reply' }],
      });
      expect(post.segments).toEqual([{ content: 'reply', media_urls: [] }]);
    });

    it('treats segments: [] and segments: null as a single post', async () => {
      expect((await createOk({ content: 'a', platforms: ['twitter'], segments: [] })).segments).toBeNull();
      expect((await createOk({ content: 'b', platforms: ['twitter'], segments: null })).segments).toBeNull();
    });

    it('stores a thread as one post: one list entry', async () => {
      const { apiKey } = await api.account('pro');
      await createOk(
        {
          content: 'thread',
          platforms: ['twitter'],
          segments: [{ content: '2' }, { content: '3' }, { content: '4' }],
        },
        apiKey,
      );
      const res = await list('', apiKey);
      expect(res.status).toBe(200);
      expect(res.body.total).toBe(1);
      expect(res.body.posts).toHaveLength(1);
      expect(res.body.posts[0].segments).toHaveLength(3);
    });

    it('accepts content with emoji and long text beyond any 5000 cap of Variant A', async () => {
      const post = await createOk({ content: `${'é😀'.repeat(3000)}`, platforms: ['facebook'] });
      expect(post.content).toBe('é😀'.repeat(3000));
    });
  });

  describe('list', () => {
    let listKey: string;
    const ids: Record<TPostStatus | 'all', string[]> = {
      all: [],
      draft: [],
      scheduled: [],
      publishing: [],
      published: [],
      failed: [],
    };

    beforeAll(async () => {
      ({ apiKey: listKey } = await api.account('starter'));
      const plan: TPostStatus[] = [
        'draft',
        'scheduled',
        'draft',
        'published',
        'draft',
        'failed',
        'scheduled',
        'draft',
        'published',
        'draft',
        'draft',
        'publishing',
        'draft',
      ];
      for (const [i, status] of plan.entries()) {
        const body: Record<string, unknown> = { content: `post ${i}`, platforms: ['twitter'] };
        if (status === 'scheduled') body.scheduled_for = tomorrow();
        const post = await createOk(body, listKey);
        if (status !== 'draft' && status !== 'scheduled') await setStatus(post.id, status);
        ids.all.unshift(post.id);
        ids[status].unshift(post.id);
        await sleep(3);
      }
    });

    it('returns {posts, total} newest first with a default limit of 10', async () => {
      const res = await list('', listKey);
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['posts', 'total']);
      expect(res.body.total).toBe(13);
      expect(res.body.posts).toHaveLength(10);
      expect(res.body.posts.map((p: TPostViewB) => p.id)).toEqual(ids.all.slice(0, 10));
      for (const post of res.body.posts) expect(Object.keys(post).sort()).toEqual(POST_KEYS);
    });

    it('returns up to 100 with limit=100', async () => {
      const res = await list('?limit=100', listKey);
      expect(res.status).toBe(200);
      expect(res.body.posts.map((p: TPostViewB) => p.id)).toEqual(ids.all);
    });

    it('pages with offset; total counts the whole filter', async () => {
      const first = await list('?limit=5', listKey);
      const second = await list('?limit=5&offset=5', listKey);
      const third = await list('?limit=5&offset=10', listKey);
      const beyond = await list('?limit=5&offset=50', listKey);
      expect(first.body.posts.map((p: TPostViewB) => p.id)).toEqual(ids.all.slice(0, 5));
      expect(second.body.posts.map((p: TPostViewB) => p.id)).toEqual(ids.all.slice(5, 10));
      expect(third.body.posts.map((p: TPostViewB) => p.id)).toEqual(ids.all.slice(10));
      expect(beyond.body).toEqual({ posts: [], total: 13 });
      for (const page of [first, second, third]) expect(page.body.total).toBe(13);
    });

    it.each(['draft', 'scheduled', 'published', 'failed'] as const)(
      'filters by status=%s',
      async (status) => {
        const res = await list(`?status=${status}&limit=100`, listKey);
        expect(res.status).toBe(200);
        expect(res.body.total).toBe(ids[status].length);
        expect(res.body.posts.map((p: TPostViewB) => p.id)).toEqual(ids[status]);
        for (const post of res.body.posts) expect(post.status).toBe(status);
      },
    );

    it('counts the whole filter when paging a status', async () => {
      const res = await list('?status=draft&limit=2&offset=1', listKey);
      expect(res.status).toBe(200);
      expect(res.body.total).toBe(7);
      expect(res.body.posts.map((p: TPostViewB) => p.id)).toEqual(ids.draft.slice(1, 3));
    });

    it("never lists another account's posts", async () => {
      const { apiKey } = await api.account('pro');
      expect((await list('', apiKey)).body).toEqual({ posts: [], total: 0 });
    });
  });

  describe('get', () => {
    it('returns the same Post object as create', async () => {
      const created = await createOk({
        content: 'read me',
        platforms: ['linkedin'],
        scheduled_for: inAnHour(),
        media: { images: [{ url: 'https://cdn.example.com/x.png', alt_text: 'x' }] },
        segments: [{ content: 'more', media_urls: ['https://cdn.example.com/y.png'] }],
      });
      const res = await get(created.id);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(created);
    });

    it('answers 404 in B shape for an unknown id, a non-UUID and another account', async () => {
      const mine = await createOk({ content: 'mine', platforms: ['twitter'] });
      expectNotFound(await get('00000000-0000-4000-8000-000000000000'));
      expectNotFound(await get('not-a-uuid'));
      expectNotFound(await get('123'));
      expectNotFound(await get(mine.id, otherKey));
    });

    it('finds a post by its id in upper case', async () => {
      const created = await createOk({ content: 'case', platforms: ['twitter'] });
      const res = await get(created.id.toUpperCase());
      expect(res.status).toBe(200);
      expect(res.body.id).toBe(created.id);
    });

    it('answers 404, not 500, for an id that is not valid percent-encoding', async () => {
      expectNotFound(await get('%E0%A4%A'));
      expectNotFound(await put('%zz', { content: 'x' }));
      expectNotFound(await request(api.app).delete('/v1/posts/%').set(bearer(key)));
    });

    it('answers unknown /v1 routes with 404 in B shape', async () => {
      expectNotFound(await request(api.app).get('/v1/nothing-here').set(bearer(key)));
      expectNotFound(await request(api.app).patch('/v1/posts').set(bearer(key)).send({}));
    });
  });

  describe('update', () => {
    it('changes only content, keeping platforms, media, segments and schedule; updated_at moves', async () => {
      const when = tomorrow();
      const created = await createOk({
        content: 'before',
        platforms: ['twitter', 'mastodon'],
        scheduled_for: when,
        media: { video: { url: 'https://cdn.example.com/v.mp4' } },
        segments: [{ content: 'reply', media_urls: ['https://cdn.example.com/r.png'] }],
      });
      await sleep(5);
      const res = await put(created.id, { content: 'after' });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(POST_KEYS);
      expect(res.body).toEqual({ ...created, content: 'after', updated_at: expect.any(String) });
      expect(new Date(res.body.updated_at).getTime()).toBeGreaterThan(new Date(created.updated_at).getTime());
      expect(res.body.created_at).toBe(created.created_at);
      expect((await get(created.id)).body).toEqual(res.body);
    });

    it('changes platforms and media independently', async () => {
      const created = await createOk({
        content: 'x',
        platforms: ['twitter'],
        media: { images: [{ url: 'https://cdn.example.com/1.png' }] },
      });
      const p = await put(created.id, { platforms: ['bluesky', 'telegram'] });
      expect(p.status).toBe(200);
      expect(p.body.platforms).toEqual(['bluesky', 'telegram']);
      expect(p.body.media).toEqual(created.media);
      const m = await put(created.id, { media: { video: { url: 'https://cdn.example.com/v.mov' } } });
      expect(m.status).toBe(200);
      expect(m.body.media).toEqual({ images: [], video: { url: 'https://cdn.example.com/v.mov' } });
      expect(m.body.platforms).toEqual(['bluesky', 'telegram']);
      const cleared = await put(created.id, { media: null });
      expect(cleared.status).toBe(200);
      expect(cleared.body.media).toBeNull();
    });

    it('accepts an empty body and changes nothing but updated_at', async () => {
      const created = await createOk({ content: 'same', platforms: ['slack'], segments: [{ content: 'r' }] });
      const res = await put(created.id, {});
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...created, updated_at: expect.any(String) });
    });

    it('segments: [] removes the replies and makes a single post', async () => {
      const created = await createOk({
        content: 't',
        platforms: ['twitter'],
        segments: [{ content: 'a' }, { content: 'b' }],
      });
      const res = await put(created.id, { segments: [] });
      expect(res.status).toBe(200);
      expect(res.body.segments).toBeNull();
      expect((await get(created.id)).body.segments).toBeNull();
    });

    it('segments: null also removes the replies', async () => {
      const created = await createOk({ content: 't', platforms: ['twitter'], segments: [{ content: 'a' }] });
      const res = await put(created.id, { segments: null });
      expect(res.status).toBe(200);
      expect(res.body.segments).toBeNull();
    });

    it('omitting segments keeps them; giving segments replaces them', async () => {
      const created = await createOk({ content: 't', platforms: ['twitter'], segments: [{ content: 'a' }] });
      const kept = await put(created.id, { content: 'u', platforms: ['bluesky'] });
      expect(kept.body.segments).toEqual([{ content: 'a', media_urls: [] }]);
      const replaced = await put(created.id, { segments: [{ content: 'b' }, { content: 'c' }] });
      expect(replaced.status).toBe(200);
      expect(replaced.body.segments).toEqual([
        { content: 'b', media_urls: [] },
        { content: 'c', media_urls: [] },
      ]);
      const single = await createOk({ content: 's', platforms: ['twitter'] });
      const threaded = await put(single.id, { segments: [{ content: 'now a thread' }] });
      expect(threaded.body.segments).toEqual([{ content: 'now a thread', media_urls: [] }]);
    });

    it('scheduled_for: null on a scheduled post makes it a draft', async () => {
      const created = await createOk({ content: 's', platforms: ['twitter'], scheduled_for: tomorrow() });
      const res = await put(created.id, { scheduled_for: null });
      expect(res.status).toBe(200);
      expect(res.body.status).toBe('draft');
      expect(res.body.scheduled_for).toBeNull();
      expect((await get(created.id)).body.status).toBe('draft');
    });

    it('scheduled_for: null on a draft keeps it a draft', async () => {
      const created = await createOk({ content: 'd', platforms: ['twitter'] });
      const res = await put(created.id, { scheduled_for: null });
      expect(res.status).toBe(200);
      expect(res.body.status).toBe('draft');
      expect(await scheduledEventsFor(created.id)).toHaveLength(0);
    });

    it('setting scheduled_for on a draft schedules it and records post.scheduled', async () => {
      const created = await createOk({ content: 'd', platforms: ['twitter'] });
      const when = tomorrow();
      const res = await put(created.id, { scheduled_for: when });
      expect(res.status).toBe(200);
      expect(res.body.status).toBe('scheduled');
      expect(res.body.scheduled_for).toBe(when);
      const events = await scheduledEventsFor(created.id);
      expect(events).toHaveLength(1);
      const data = events[0]?.data as { post: TPostViewB };
      expect(data.post.scheduled_for).toBe(when);
    });

    it('moving a scheduled post records a new post.scheduled; a content edit does not', async () => {
      const created = await createOk({ content: 's', platforms: ['twitter'], scheduled_for: tomorrow() });
      expect(await scheduledEventsFor(created.id)).toHaveLength(1);
      const edited = await put(created.id, { content: 'edited' });
      expect(edited.body.status).toBe('scheduled');
      expect(await scheduledEventsFor(created.id)).toHaveLength(1);
      const later = new Date(Date.now() + 2 * 86_400_000).toISOString();
      const moved = await put(created.id, { scheduled_for: later });
      expect(moved.body.status).toBe('scheduled');
      expect(moved.body.scheduled_for).toBe(later);
      expect(await scheduledEventsFor(created.id)).toHaveLength(2);
    });

    it.each(['published', 'publishing'] as const)(
      'answers 409 post_not_editable for a %s post',
      async (status) => {
        const created = await createOk({ content: 'frozen', platforms: ['twitter'] });
        await setStatus(created.id, status);
        const res = await put(created.id, { content: 'changed' });
        expect(res.status).toBe(409);
        expect(Object.keys(res.body).sort()).toEqual(['code', 'details', 'error']);
        expect(res.body.code).toBe('post_not_editable');
        expect(res.body.details.status).toBe(status);
        const after = (await get(created.id)).body;
        expect(after.content).toBe('frozen');
        expect(after.status).toBe(status);
      },
    );

    it('lets a failed post be edited; it becomes a draft again (spec silent; README Decisions)', async () => {
      const created = await createOk({ content: 'failed', platforms: ['twitter'] });
      await setStatus(created.id, 'failed');
      const res = await put(created.id, { content: 'changed' });
      expect(res.status).toBe(200);
      expect(res.body.status).toBe('draft');
      expect(res.body.content).toBe('changed');
    });

    it('answers 404 for an unknown id, a non-UUID and another account', async () => {
      const mine = await createOk({ content: 'mine', platforms: ['twitter'] });
      expectNotFound(await put('00000000-0000-4000-8000-000000000000', { content: 'x' }));
      expectNotFound(await put('nope', { content: 'x' }));
      expectNotFound(await put(mine.id, { content: 'stolen' }, otherKey));
      expect((await get(mine.id)).body.content).toBe('mine');
    });
  });

  describe('delete', () => {
    it('answers 204 with no body, then the post is gone', async () => {
      const created = await createOk({
        content: 'bye',
        platforms: ['twitter'],
        segments: [{ content: 'r' }],
      });
      const res = await request(api.app).delete(`/v1/posts/${created.id}`).set(bearer(key));
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect(res.headers['content-type']).toBeUndefined();
      expectNotFound(await get(created.id));
      expectNotFound(await request(api.app).delete(`/v1/posts/${created.id}`).set(bearer(key)));
      expectNotFound(await put(created.id, { content: 'x' }));
    });

    it('removes a scheduled post from the list', async () => {
      const { apiKey } = await api.account('pro');
      const created = await createOk(
        { content: 's', platforms: ['twitter'], scheduled_for: tomorrow() },
        apiKey,
      );
      expect((await request(api.app).delete(`/v1/posts/${created.id}`).set(bearer(apiKey))).status).toBe(204);
      expect((await list('', apiKey)).body).toEqual({ posts: [], total: 0 });
    });

    it('answers 404 for a post that is already being removed (deleted_at set), like GET does', async () => {
      const created = await createOk({ content: 'going', platforms: ['twitter'] });
      await api.db.post.update({ where: { id: created.id }, data: { deletedAt: new Date() } });
      expectNotFound(await get(created.id));
      expectNotFound(await request(api.app).delete(`/v1/posts/${created.id}`).set(bearer(key)));
      expect(await api.db.post.count({ where: { id: created.id } })).toBe(1);
    });

    it("answers 404 for another account's post and leaves it in place", async () => {
      const created = await createOk({ content: 'keep', platforms: ['twitter'] });
      expectNotFound(await request(api.app).delete(`/v1/posts/${created.id}`).set(bearer(otherKey)));
      expectNotFound(await request(api.app).delete('/v1/posts/not-a-uuid').set(bearer(key)));
      expect((await get(created.id)).status).toBe(200);
    });
  });

  describe('authentication', () => {
    it('answers 401 in B shape without a key, with a bad key, and for x-api-key', async () => {
      const none = await request(api.app).get('/v1/posts');
      expect(none.status).toBe(401);
      expect(none.body.code).toBe('unauthorized');
      expect(Object.keys(none.body).sort()).toEqual(['code', 'details', 'error']);
      expect((await request(api.app).get('/v1/posts').set(bearer('sk_live_nope'))).status).toBe(401);
      expect((await request(api.app).get('/v1/posts').set('x-api-key', key)).status).toBe(401);
    });
  });

  describe('both variants share one store', () => {
    it('a post created through /v1 is readable through /api in camelCase', async () => {
      const when = tomorrow();
      const created = await createOk({
        content: 'from B',
        platforms: ['twitter', 'bluesky'],
        scheduled_for: when,
        media: { images: [{ url: 'https://cdn.example.com/i.png', alt_text: 'alt' }] },
        segments: [{ content: 'reply', media_urls: ['https://cdn.example.com/v.mp4'] }],
      });
      const res = await request(api.app).get(`/api/posts/${created.id}`).set('x-api-key', key);
      expect(res.status).toBe(200);
      expect(res.body.post).toMatchObject({
        id: created.id,
        content: 'from B',
        platforms: ['twitter', 'bluesky'],
        scheduledFor: when,
        published: false,
        queueStatus: null,
        platformPostIds: null,
        createdAt: created.created_at,
        mediaUrls: [{ url: 'https://cdn.example.com/i.png', altText: 'alt' }],
        segments: [{ content: 'reply', mediaUrls: [{ url: 'https://cdn.example.com/v.mp4' }] }],
      });
      expect(res.body.post).not.toHaveProperty('scheduled_for');
      expect(res.body.post).not.toHaveProperty('created_at');
    });

    it('a post created through /api is readable and updatable through /v1', async () => {
      const created = await request(api.app)
        .post('/api/posts')
        .set('x-api-key', key)
        .send({
          content: 'from A',
          platforms: ['twitter', 'linkedin'],
          mediaUrls: ['https://cdn.example.com/a.png'],
          segments: [{ content: 'A reply' }],
        });
      expect(created.status).toBe(201);
      const id = created.body.post.id as string;
      const read = await get(id);
      expect(read.status).toBe(200);
      expect(Object.keys(read.body).sort()).toEqual(POST_KEYS);
      expect(read.body).toMatchObject({
        id,
        content: 'from A',
        platforms: ['twitter', 'linkedin'],
        status: 'draft',
        scheduled_for: null,
        media: { images: [{ url: 'https://cdn.example.com/a.png' }], video: null },
        segments: [{ content: 'A reply', media_urls: [] }],
      });
      const when = tomorrow();
      const updated = await put(id, { content: 'edited in B', scheduled_for: when });
      expect(updated.status).toBe(200);
      expect(updated.body).toMatchObject({
        content: 'edited in B',
        status: 'scheduled',
        scheduled_for: when,
      });
      expect(updated.body.segments).toEqual([{ content: 'A reply', media_urls: [] }]);
      const back = await request(api.app).get(`/api/posts/${id}`).set('x-api-key', key);
      expect(back.body.post).toMatchObject({ content: 'edited in B', scheduledFor: when });
    });

    it('a queued Variant A post is a draft in /v1 and listed there', async () => {
      const { apiKey } = await api.account('pro');
      const created = await request(api.app)
        .post('/api/posts')
        .set('x-api-key', apiKey)
        .send({ content: 'queued', platforms: ['twitter'], queueStatus: 'queued' });
      expect(created.status).toBe(201);
      const res = await list('?status=draft', apiKey);
      expect(res.body.total).toBe(1);
      expect(res.body.posts[0].id).toBe(created.body.post.id);
    });
  });
});
