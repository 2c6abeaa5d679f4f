import { randomUUID } from 'node:crypto';
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
interface TPostA {
  id: string;
  content: string;
  platforms: string[];
  scheduledFor: string | null;
  published: boolean;
  queueStatus: 'queued' | 'pending' | null;
  platformPostIds: Record<string, { id: string; url: string } | { error: string }> | null;
  createdAt: string;
  mediaUrls?: unknown[];
  segments?: unknown[];
  poll?: unknown;
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

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const FUTURE = '2099-06-01T10:00:00.000Z';

describe('Variant A posts', () => {
  let api: TTestApi;
  let key: string;
  let accountId: string;

  beforeAll(async () => {
    api = await startTestApi();
    ({ apiKey: key, accountId } = await api.account('pro'));
  });
  afterAll(() => api.close());

  const create = async (body: object, apiKey = key): Promise<TPostA> => {
    const res = await request(api.app).post('/api/posts').set(bearer(apiKey)).send(body);
    expect(res.status).toBe(201);
    return (res.body as { post: TPostA }).post;
  };

  describe('POST /api/posts', () => {
    it('answers 201 {success, post} with every Post field of a draft', async () => {
      const before = Date.now();
      const res = await request(api.app)
        .post('/api/posts')
        .set(bearer(key))
        .send({ content: 'Hello', platforms: ['twitter', 'bluesky'] });
      expect(res.status).toBe(201);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body.success).toBe(true);
      expect(res.body).not.toHaveProperty('publishResults');
      const post = res.body.post as TPostA;
      expect(post).toEqual(
        expect.objectContaining({
          id: expect.stringMatching(/^[0-9a-f-]{36}$/),
          content: 'Hello',
          platforms: ['twitter', 'bluesky'],
          scheduledFor: null,
          published: false,
          queueStatus: null,
          platformPostIds: null,
          createdAt: expect.stringMatching(ISO),
        }),
      );
      expect(new Date(post.createdAt).getTime()).toBeGreaterThanOrEqual(before - 1000);
    });

    it('stores a scheduled post with its time and a queued/pending one with its queueStatus', async () => {
      const scheduled = await create({ content: 's', platforms: ['twitter'], scheduledFor: FUTURE });
      expect(scheduled).toMatchObject({ scheduledFor: FUTURE, published: false, queueStatus: null });
      const queued = await create({ content: 'q', platforms: ['twitter'], queueStatus: 'queued' });
      expect(queued).toMatchObject({ scheduledFor: null, published: false, queueStatus: 'queued' });
      const pending = await create({ content: 'p', platforms: ['twitter'], queueStatus: 'pending' });
      expect(pending).toMatchObject({ scheduledFor: null, published: false, queueStatus: 'pending' });
    });

    it('keeps media, segments and poll', async () => {
      const post = await create({
        content: 'thread',
        platforms: ['twitter'],
        mediaUrls: [{ url: 'https://cdn.example.com/a.png', altText: 'A' }],
        segments: [{ content: 'two' }, { content: 'three' }],
      });
      expect(post.mediaUrls).toEqual([{ url: 'https://cdn.example.com/a.png', altText: 'A' }]);
      expect(post.segments).toEqual([
        { content: 'two', mediaUrls: [] },
        { content: 'three', mediaUrls: [] },
      ]);
      const withPoll = await create({
        content: 'poll',
        platforms: ['twitter'],
        poll: { options: ['y', 'n'], durationMinutes: 30 },
      });
      expect(withPoll.poll).toEqual({ options: ['y', 'n'], durationMinutes: 30 });
    });

    it('ignores unknown fields rather than storing them', async () => {
      const post = await create({
        content: 'x',
        platforms: ['twitter'],
        status: 'published',
        id: randomUUID(),
      });
      expect(post.published).toBe(false);
    });
  });

  describe('GET /api/posts', () => {
    let other: { apiKey: string };
    beforeAll(async () => {
      other = await api.account('pro');
    });

    it('answers {success, posts: []} for an account without posts', async () => {
      const res = await request(api.app).get('/api/posts').set(bearer(other.apiKey));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true, posts: [], total: 0, hasMore: false });
    });

    it('lists every post newest first', async () => {
      const a = await create({ content: 'first', platforms: ['twitter'] }, other.apiKey);
      const b = await create(
        { content: 'second', platforms: ['twitter'], queueStatus: 'queued' },
        other.apiKey,
      );
      const c = await create(
        { content: 'third', platforms: ['twitter'], queueStatus: 'pending' },
        other.apiKey,
      );
      const d = await create(
        { content: 'fourth', platforms: ['twitter'], scheduledFor: FUTURE },
        other.apiKey,
      );
      const res = await request(api.app).get('/api/posts').set(bearer(other.apiKey));
      expect(res.status).toBe(200);
      expect(res.body.success).toBe(true);
      expect((res.body.posts as TPostA[]).map((p) => p.id)).toEqual([d.id, c.id, b.id, a.id]);
      const listed = (res.body.posts as TPostA[])[0];
      expect(listed).toEqual(d);
    });

    it('filters by status=queued and status=pending', async () => {
      const queued = await request(api.app).get('/api/posts?status=queued').set(bearer(other.apiKey));
      expect(queued.status).toBe(200);
      expect((queued.body.posts as TPostA[]).map((p) => p.content)).toEqual(['second']);
      const pending = await request(api.app)
        .get('/api/posts')
        .query({ status: 'pending' })
        .set(bearer(other.apiKey));
      expect(pending.status).toBe(200);
      expect((pending.body.posts as TPostA[]).map((p) => p.content)).toEqual(['third']);
    });

    it.each([['draft'], ['published'], ['QUEUED'], ['queued,pending']])(
      'rejects status=%s with a 400 naming status',
      async (status) => {
        const res = await request(api.app).get('/api/posts').query({ status }).set(bearer(other.apiKey));
        expectErrorA(res, 400, 'status');
      },
    );

    it('rejects a repeated status with a 400 naming status', async () => {
      const res = await request(api.app)
        .get('/api/posts?status=queued&status=pending')
        .set(bearer(other.apiKey));
      expectErrorA(res, 400, 'status');
    });
  });

  describe('GET /api/posts/:id', () => {
    it('answers {post} equal to the created post', async () => {
      const created = await create({ content: 'get me', platforms: ['mastodon'], scheduledFor: FUTURE });
      const res = await request(api.app).get(`/api/posts/${created.id}`).set(bearer(key));
      expect(res.status).toBe(200);
      expect(Object.keys(res.body)).toEqual(['post']);
      expect(res.body.post).toEqual(created);
    });

    it('answers 404 in A shape for an unknown id and for a non-UUID id', async () => {
      expectErrorA(await request(api.app).get(`/api/posts/${randomUUID()}`).set(bearer(key)), 404);
      expectErrorA(await request(api.app).get('/api/posts/not-a-uuid').set(bearer(key)), 404);
      expectErrorA(await request(api.app).get('/api/posts/1').set(bearer(key)), 404);
    });

    it('answers 404, not 500, to an id that is not valid percent-encoding', async () => {
      expectErrorA(await request(api.app).get('/api/posts/%E0%A4%A').set(bearer(key)), 404);
      expectErrorA(
        await request(api.app)
          .put('/api/posts/%zz')
          .set(bearer(key))
          .send({ content: 'x', platforms: ['twitter'] }),
        404,
      );
      expectErrorA(await request(api.app).delete('/api/posts/%').set(bearer(key)), 404);
      // Authentication still comes first.
      expectErrorA(await request(api.app).get('/api/posts/%E0%A4%A'), 401);
    });

    it('shows published and platformPostIds from the stored outcome', async () => {
      const created = await create({ content: 'out', platforms: ['twitter', 'bluesky'] });
      await api.db.post.update({
        where: { id: created.id },
        data: { status: 'published', publishedAt: new Date() },
      });
      await api.db.postTarget.create({
        data: {
          postId: created.id,
          platform: 'twitter',
          status: 'succeeded',
          remotePostId: '123',
          remoteUrl: 'https://x.com/u/status/123',
        },
      });
      await api.db.postTarget.create({
        data: {
          postId: created.id,
          platform: 'bluesky',
          status: 'failed',
          error: 'Token expired: reconnect the account',
        },
      });
      const res = await request(api.app).get(`/api/posts/${created.id}`).set(bearer(key));
      expect(res.status).toBe(200);
      expect(res.body.post.published).toBe(true);
      expect(res.body.post.platformPostIds).toEqual({
        twitter: { id: '123', url: 'https://x.com/u/status/123' },
        bluesky: { error: 'Token expired: reconnect the account' },
      });
    });
  });

  describe('PUT /api/posts/:id', () => {
    const put = (id: string, body: unknown) =>
      request(api.app)
        .put(`/api/posts/${id}`)
        .set(bearer(key))
        .send(body as object);

    it('updates a draft and answers {post}', async () => {
      const created = await create({ content: 'before', platforms: ['twitter'] });
      const res = await put(created.id, { content: 'after', platforms: ['mastodon', 'bluesky'] });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body)).toEqual(['post']);
      expect(res.body.post).toMatchObject({
        id: created.id,
        content: 'after',
        platforms: ['mastodon', 'bluesky'],
        published: false,
        createdAt: created.createdAt,
      });
      const read = await request(api.app).get(`/api/posts/${created.id}`).set(bearer(key));
      expect(read.body.post).toEqual(res.body.post);
    });

    it('updates a scheduled post, moves it, and unschedules it with null', async () => {
      const created = await create({ content: 's', platforms: ['twitter'], scheduledFor: FUTURE });
      const moved = await put(created.id, {
        content: 's',
        platforms: ['twitter'],
        scheduledFor: '2099-07-01T12:00:00+02:00',
      });
      expect(moved.status).toBe(200);
      expect(moved.body.post.scheduledFor).toBe('2099-07-01T10:00:00.000Z');
      const cleared = await put(created.id, { content: 's', platforms: ['twitter'], scheduledFor: null });
      expect(cleared.status).toBe(200);
      expect(cleared.body.post.scheduledFor).toBeNull();
    });

    it('moves a post between schedule and queue', async () => {
      const created = await create({ content: 'm', platforms: ['twitter'], scheduledFor: FUTURE });
      const queued = await put(created.id, { content: 'm', platforms: ['twitter'], queueStatus: 'queued' });
      expect(queued.status).toBe(200);
      expect(queued.body.post).toMatchObject({ queueStatus: 'queued', scheduledFor: null });
      const rescheduled = await put(created.id, {
        content: 'm',
        platforms: ['twitter'],
        scheduled_for: FUTURE,
      });
      expect(rescheduled.status).toBe(200);
      expect(rescheduled.body.post).toMatchObject({ queueStatus: null, scheduledFor: FUTURE });
    });

    it('validates the body like create, naming the field', async () => {
      const created = await create({ content: 'v', platforms: ['twitter'] });
      expectErrorA(await put(created.id, { content: '', platforms: ['twitter'] }), 400, 'content');
      expectErrorA(await put(created.id, { content: 'x' }), 400, 'platforms');
      expectErrorA(
        await put(created.id, { content: 'x', platforms: ['twitter'], scheduledFor: '2099-01-01T00:00:00' }),
        400,
        'scheduledFor',
      );
      expectErrorA(
        await put(created.id, { content: 'a'.repeat(281), platforms: ['twitter'] }),
        400,
        'content',
      );
      expectErrorA(await put(created.id, []), 400);
      const res = await request(api.app)
        .put(`/api/posts/${created.id}`)
        .set(bearer(key))
        .set('Content-Type', 'application/json')
        .send('{oops');
      expectErrorA(res, 400, 'body');
      const unchanged = await request(api.app).get(`/api/posts/${created.id}`).set(bearer(key));
      expect(unchanged.body.post.content).toBe('v');
    });

    it.each([['published'], ['publishing']] as const)(
      'answers 400 for a %s post and leaves it unchanged',
      async (status) => {
        const created = await create({ content: 'frozen', platforms: ['twitter'] });
        await api.db.post.update({ where: { id: created.id }, data: { status } });
        const body = expectErrorA(await put(created.id, { content: 'changed', platforms: ['twitter'] }), 400);
        expect(body.error).toContain(status);
        expect(body.fix).toEqual(expect.any(String));
        const read = await request(api.app).get(`/api/posts/${created.id}`).set(bearer(key));
        expect(read.body.post.content).toBe('frozen');
      },
    );

    it('refuses published: true without a connected account (400 naming platforms) and leaves the post unchanged', async () => {
      const created = await create({ content: 'draft', platforms: ['twitter'] });
      expectErrorA(
        await put(created.id, { content: 'now', platforms: ['twitter'], published: true }),
        400,
        'platforms',
      );
      const read = await request(api.app).get(`/api/posts/${created.id}`).set(bearer(key));
      expect(read.body.post.content).toBe('draft');
    });

    it('answers 404 for an unknown or non-UUID id', async () => {
      expectErrorA(await put(randomUUID(), { content: 'x', platforms: ['twitter'] }), 404);
      expectErrorA(await put('nope', { content: 'x', platforms: ['twitter'] }), 404);
    });
  });

  describe('DELETE /api/posts/:id', () => {
    const del = (path: string) => request(api.app).delete(path).set(bearer(key));

    it('answers 200 with a JSON object, deleteFromPlatforms true by default, and the post is gone', async () => {
      const created = await create({ content: 'bye', platforms: ['twitter'] });
      const res = await del(`/api/posts/${created.id}`);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body).toEqual(
        expect.objectContaining({ success: true, id: created.id, deleteFromPlatforms: true }),
      );
      expectErrorA(await request(api.app).get(`/api/posts/${created.id}`).set(bearer(key)), 404);
      const list = await request(api.app).get('/api/posts').set(bearer(key));
      expect((list.body.posts as TPostA[]).map((p) => p.id)).not.toContain(created.id);
      expectErrorA(await del(`/api/posts/${created.id}`), 404);
    });

    it.each([
      ['true', true],
      ['false', false],
      ['1', true],
      ['0', false],
    ])('accepts deleteFromPlatforms=%s', async (flag, expected) => {
      const created = await create({ content: 'flag', platforms: ['twitter'] });
      const res = await del(`/api/posts/${created.id}?deleteFromPlatforms=${flag}`);
      expect(res.status).toBe(200);
      expect(res.body.deleteFromPlatforms).toBe(expected);
    });

    it.each([['maybe'], ['yes'], ['2']])(
      'rejects deleteFromPlatforms=%s with a 400 naming it and keeps the post',
      async (flag) => {
        const created = await create({ content: 'keep', platforms: ['twitter'] });
        expectErrorA(
          await del(`/api/posts/${created.id}?deleteFromPlatforms=${flag}`),
          400,
          'deleteFromPlatforms',
        );
        expect((await request(api.app).get(`/api/posts/${created.id}`).set(bearer(key))).status).toBe(200);
      },
    );

    it('rejects a repeated deleteFromPlatforms', async () => {
      const created = await create({ content: 'keep', platforms: ['twitter'] });
      expectErrorA(
        await del(`/api/posts/${created.id}?deleteFromPlatforms=true&deleteFromPlatforms=false`),
        400,
        'deleteFromPlatforms',
      );
    });

    it('deletes a published post too', async () => {
      const created = await create({ content: 'pub', platforms: ['twitter'] });
      await api.db.post.update({ where: { id: created.id }, data: { status: 'published' } });
      expect((await del(`/api/posts/${created.id}?deleteFromPlatforms=false`)).status).toBe(200);
      expectErrorA(await request(api.app).get(`/api/posts/${created.id}`).set(bearer(key)), 404);
    });

    it('answers 404 for an unknown or non-UUID id', async () => {
      expectErrorA(await del(`/api/posts/${randomUUID()}`), 404);
      expectErrorA(await del('/api/posts/xyz'), 404);
    });
  });

  describe('publishing without a connected account', () => {
    it('answers 400 in A shape naming platforms for published: true on create', async () => {
      const res = await request(api.app)
        .post('/api/posts')
        .set(bearer(key))
        .send({ content: 'now', platforms: ['twitter'], published: true });
      const body = expectErrorA(res, 400, 'platforms');
      expect(body.fix).toEqual(expect.any(String));
    });
  });

  describe('unknown routes', () => {
    it('answers 404 in A shape under /api', async () => {
      expectErrorA(await request(api.app).get('/api/nothing-here').set(bearer(key)), 404);
      expectErrorA(await request(api.app).patch(`/api/posts/${randomUUID()}`).set(bearer(key)).send({}), 404);
    });
  });

  describe('across variants', () => {
    it('a post created through A is readable and updatable through /v1', async () => {
      const created = await create({ content: 'from A', platforms: ['twitter'], scheduledFor: FUTURE });
      const read = await request(api.app).get(`/v1/posts/${created.id}`).set(bearer(key));
      expect(read.status).toBe(200);
      expect(read.body).toMatchObject({
        id: created.id,
        content: 'from A',
        platforms: ['twitter'],
        status: 'scheduled',
        scheduled_for: FUTURE,
      });
      const updated = await request(api.app)
        .put(`/v1/posts/${created.id}`)
        .set(bearer(key))
        .send({ content: 'edited in B' });
      expect(updated.status).toBe(200);
      expect(updated.body.content).toBe('edited in B');
      const again = await request(api.app).get(`/api/posts/${created.id}`).set(bearer(key));
      expect(again.body.post).toMatchObject({
        content: 'edited in B',
        scheduledFor: FUTURE,
        published: false,
      });
    });

    it('a post created through /v1 is readable and updatable through A', async () => {
      const created = await request(api.app)
        .post('/v1/posts')
        .set(bearer(key))
        .send({
          content: 'from B',
          platforms: ['mastodon'],
          media: { images: [{ url: 'https://cdn.example.com/b.png', alt_text: 'b' }] },
        });
      expect(created.status).toBe(201);
      const id = created.body.id as string;
      const read = await request(api.app).get(`/api/posts/${id}`).set(bearer(key));
      expect(read.status).toBe(200);
      expect(read.body.post).toMatchObject({
        id,
        content: 'from B',
        platforms: ['mastodon'],
        scheduledFor: null,
        published: false,
        queueStatus: null,
        platformPostIds: null,
        mediaUrls: [{ url: 'https://cdn.example.com/b.png', altText: 'b' }],
      });
      const listed = await request(api.app).get('/api/posts').set(bearer(key));
      expect((listed.body.posts as TPostA[])[0]?.id).toBe(id);
      const updated = await request(api.app)
        .put(`/api/posts/${id}`)
        .set(bearer(key))
        .send({ content: 'edited in A', platforms: ['mastodon'] });
      expect(updated.status).toBe(200);
      const inB = await request(api.app).get(`/v1/posts/${id}`).set(bearer(key));
      expect(inB.body).toMatchObject({ content: 'edited in A', status: 'draft' });
    });

    it('a post deleted through A is gone from /v1', async () => {
      const created = await create({ content: 'gone', platforms: ['twitter'] });
      expect((await request(api.app).delete(`/api/posts/${created.id}`).set(bearer(key))).status).toBe(200);
      expect((await request(api.app).get(`/v1/posts/${created.id}`).set(bearer(key))).status).toBe(404);
    });
  });

  it('keeps every post in this file within its account', async () => {
    const rows = await api.db.post.findMany({ where: { accountId }, select: { id: true } });
    const res = await request(api.app).get('/api/posts').set(bearer(key));
    expect((res.body.posts as TPostA[]).length).toBe(rows.length);
  });
});
