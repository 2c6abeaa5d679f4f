import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';
import {
  createB,
  getB,
  pollUntil,
  settleB,
  simPosts,
  type TErrorB,
  type TPostB,
  uniqueMarker,
} from './pipeline-helpers.js';

describe('Variant B publishing pipeline', () => {
  let api: TTestApi;
  let key: string;
  let accountId: string;

  beforeAll(async () => {
    api = await startTestApi({ publisher: true });
    ({ apiKey: key, accountId } = await api.account('pro'));
    for (const p of ['twitter', 'mastodon', 'bluesky', 'linkedin', 'youtube', 'facebook'] as const)
      await api.connect(accountId, p);
  });
  afterEach(() => api.sim?.sim.clearFaults());
  afterAll(() => api.close());

  const publish = (id: string, apiKey = key) =>
    request(api.app).post(`/v1/posts/${id}/publish`).set(bearer(apiKey));

  function expectErrorB(res: request.Response, status: number, code: string): TErrorB {
    expect(res.status).toBe(status);
    const body = res.body as TErrorB;
    expect(Object.keys(body).sort()).toEqual(['code', 'details', 'error']);
    expect(body.code).toBe(code);
    expect(typeof body.error).toBe('string');
    return body;
  }

  it('answers 200 at once with publishing, then fills platform_results and becomes published', async () => {
    const marker = uniqueMarker('b-ok');
    const post = await createB(api, key, { content: `hello ${marker}`, platforms: ['twitter', 'mastodon'] });
    expect(post.status).toBe('draft');
    const started = Date.now();
    const res = await publish(post.id);
    expect(res.status).toBe(200);
    const body = res.body as TPostB;
    expect(body.id).toBe(post.id);
    expect(body.status).toBe('publishing');
    expect(body.platform_results).toBeNull();
    expect(body.published_at).toBeNull();
    expect(Date.now() - started).toBeLessThan(1500);

    const done = await settleB(api, key, post.id);
    expect(done.status).toBe('published');
    expect(done.published_at).toEqual(expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/));
    const tweet = simPosts(api, 'twitter', marker);
    const toot = simPosts(api, 'mastodon', marker);
    expect(tweet).toHaveLength(1);
    expect(toot).toHaveLength(1);
    expect(done.platform_results).toEqual({
      twitter: {
        success: true,
        post_id: tweet[0]?.remoteId,
        post_url: expect.stringContaining(tweet[0]?.remoteId ?? '?'),
      },
      mastodon: {
        success: true,
        post_id: toot[0]?.remoteId,
        post_url: expect.stringContaining(toot[0]?.remoteId ?? '?'),
      },
    });

    const events = await api.db.event.findMany({
      where: { accountId, type: { in: ['post.published', 'post.failed'] } },
    });
    const mine = events.filter((e) => (e.data as { post?: { id?: string } }).post?.id === post.id);
    expect(mine.map((e) => e.type)).toEqual(['post.published']);
    expect((mine[0]?.data as { post: TPostB } | undefined)?.post).toEqual(done);
  });

  it('is published when one network succeeds and another fails, with the error in platform_results', async () => {
    const marker = uniqueMarker('b-half');
    api.sim?.sim.addFault({
      platform: 'mastodon',
      kind: 'rejected',
      remaining: 1,
      pathIncludes: '/api/v1/statuses',
    });
    const post = await createB(api, key, { content: `half ${marker}`, platforms: ['twitter', 'mastodon'] });
    expect((await publish(post.id)).status).toBe(200);
    const done = await settleB(api, key, post.id);
    expect(done.status).toBe('published');
    expect(done.platform_results?.twitter?.success).toBe(true);
    expect(done.platform_results?.mastodon).toEqual({
      success: false,
      error: expect.stringContaining('Mastodon rejected the post'),
    });
    expect(simPosts(api, 'mastodon', marker)).toHaveLength(0);
  });

  it('is failed when every network failed, and writes post.failed with the full post', async () => {
    const marker = uniqueMarker('b-fail');
    api.sim?.sim.addFault({ platform: 'twitter', kind: 'rejected', remaining: 1 });
    const post = await createB(api, key, { content: `fail ${marker}`, platforms: ['twitter'] });
    expect((await publish(post.id)).status).toBe(200);
    const done = await settleB(api, key, post.id);
    expect(done.status).toBe('failed');
    expect(done.published_at).toBeNull();
    expect(done.platform_results).toEqual({
      twitter: { success: false, error: expect.stringMatching(/X rejected the post.*retry/) },
    });
    const events = await api.db.event.findMany({
      where: { accountId, type: { in: ['post.published', 'post.failed'] } },
    });
    const mine = events.filter((e) => (e.data as { post?: { id?: string } }).post?.id === post.id);
    expect(mine.map((e) => e.type)).toEqual(['post.failed']);
    expect((mine[0]?.data as { post: TPostB } | undefined)?.post).toEqual(done);

    // A failed post cannot be published again (409): only draft and scheduled can.
    const again = expectErrorB(await publish(post.id), 409, 'post_not_publishable');
    expect(again.details.status).toBe('failed');
  });

  it('answers 409 for a post that is publishing or published', async () => {
    const marker = uniqueMarker('b-409');
    api.sim?.sim.addFault({ platform: 'linkedin', kind: 'slow', delayMs: 800, remaining: 1 });
    const post = await createB(api, key, { content: `busy ${marker}`, platforms: ['linkedin'] });
    expect((await publish(post.id)).status).toBe(200);
    const busy = expectErrorB(await publish(post.id), 409, 'post_not_publishable');
    expect(busy.details.status).toBe('publishing');
    const done = await settleB(api, key, post.id);
    expect(done.status).toBe('published');
    const twice = expectErrorB(await publish(post.id), 409, 'post_not_publishable');
    expect(twice.details.status).toBe('published');
    expect(simPosts(api, 'linkedin', marker)).toHaveLength(1);
  });

  it('publishes a scheduled post on request (200) and drops its schedule', async () => {
    const marker = uniqueMarker('b-sched');
    const post = await createB(api, key, {
      content: `sched ${marker}`,
      platforms: ['facebook'],
      scheduled_for: new Date(Date.now() + 3_600_000).toISOString(),
    });
    expect(post.status).toBe('scheduled');
    const res = await publish(post.id);
    expect(res.status).toBe(200);
    expect((res.body as TPostB).status).toBe('publishing');
    expect((await settleB(api, key, post.id)).status).toBe('published');
    const jobs = await api.queues.schedule.getJobs(['delayed', 'wait']);
    expect(jobs.filter((j) => (j.data as { postId?: string }).postId === post.id)).toHaveLength(0);
  });

  it('answers 422 content_too_long over a listed network limit, checked at publish time only', async () => {
    const tooLong = await createB(api, key, { content: 'a'.repeat(281), platforms: ['twitter', 'linkedin'] });
    expect(tooLong.status).toBe('draft');
    const body = expectErrorB(await publish(tooLong.id), 422, 'content_too_long');
    expect(body.error).toContain('twitter');
    expect(body.details.field).toBe('content');
    expect((await getB(api, key, tooLong.id)).status).toBe('draft');

    // 280 is the limit, and a link counts as 23 whatever its length.
    const fits = await createB(api, key, { content: 'b'.repeat(280), platforms: ['twitter'] });
    expect((await publish(fits.id)).status).toBe(200);
    const link = `https://example.com/${'x'.repeat(120)}`;
    const withLink = await createB(api, key, {
      content: `${'c'.repeat(250)} ${link}`,
      platforms: ['twitter'],
    });
    expect((await publish(withLink.id)).status).toBe(200);
    expect((await settleB(api, key, fits.id)).status).toBe('published');
    expect((await settleB(api, key, withLink.id)).status).toBe('published');
  });

  it('answers 422 when a segment is over 300 graphemes for bluesky, but not for linkedin alone', async () => {
    const segment = 'd'.repeat(301);
    const post = await createB(api, key, {
      content: 'thread head',
      platforms: ['bluesky', 'linkedin'],
      segments: [{ content: segment }],
    });
    expect(post.status).toBe('draft');
    const body = expectErrorB(await publish(post.id), 422, 'content_too_long');
    expect(body.error).toContain('bluesky');
    expect(body.details.field).toBe('segments.0.content');

    const marker = uniqueMarker('b-li');
    const linkedinOnly = await createB(api, key, {
      content: `head ${marker}`,
      platforms: ['linkedin'],
      segments: [{ content: segment }],
    });
    expect((await publish(linkedinOnly.id)).status).toBe(200);
    expect((await settleB(api, key, linkedinOnly.id)).status).toBe('published');
    expect(simPosts(api, 'linkedin', marker)).toHaveLength(1);
  });

  it('answers 422 no_connected_account for a network without an account, and for a disconnected one', async () => {
    const post = await createB(api, key, { content: 'no account', platforms: ['twitter', 'telegram'] });
    const body = expectErrorB(await publish(post.id), 422, 'no_connected_account');
    expect(body.error).toContain('telegram');
    expect(body.details.platforms).toEqual(['telegram']);

    const other = await api.account('pro');
    const discordId = await api.connect(other.accountId, 'discord');
    await api.db.socialAccount.update({ where: { id: discordId }, data: { isActive: false } });
    const disconnected = await createB(api, other.apiKey, { content: 'gone', platforms: ['discord'] });
    const res = expectErrorB(await publish(disconnected.id, other.apiKey), 422, 'no_connected_account');
    expect(res.error).toContain('discord');
    expect((await getB(api, other.apiKey, disconnected.id)).status).toBe('draft');
  });

  it('answers 422 for media a network cannot take (youtube without a video)', async () => {
    const post = await createB(api, key, { content: 'no video', platforms: ['youtube'] });
    const body = expectErrorB(await publish(post.id), 422, 'media_not_supported');
    expect(body.error).toContain('youtube needs a video');
    // Images youtube cannot take are refused already when the post is created (media-rules-api.test.ts).
    const images = await request(api.app)
      .post('/v1/posts')
      .set(bearer(key))
      .send({
        content: 'images only',
        platforms: ['youtube'],
        media: { images: [{ url: 'https://cdn.example.com/a.png' }] },
      });
    expect(images.status).toBe(422);
    expect(images.body.details.field).toBe('media.images.0');
  });

  it("answers 404 for another account's post and publishes nothing", async () => {
    const other = await api.account('pro');
    await api.connect(other.accountId, 'twitter');
    const marker = uniqueMarker('b-404');
    const post = await createB(api, key, { content: `mine ${marker}`, platforms: ['twitter'] });
    expectErrorB(await publish(post.id, other.apiKey), 404, 'not_found');
    expect((await getB(api, key, post.id)).status).toBe('draft');
    expect(simPosts(api, 'twitter', marker)).toHaveLength(0);
  });

  it('lists a publishing post as publishing, then under status=published', async () => {
    const marker = uniqueMarker('b-list');
    api.sim?.sim.addFault({ platform: 'facebook', kind: 'slow', delayMs: 400, remaining: 1 });
    const post = await createB(api, key, { content: `list ${marker}`, platforms: ['facebook'] });
    await publish(post.id);
    expect((await getB(api, key, post.id)).status).toBe('publishing');
    const listed = await pollUntil(
      async () =>
        (await request(api.app).get('/v1/posts?status=published&limit=100').set(bearer(key))).body as {
          posts: TPostB[];
        },
      (b) => b.posts.some((p) => p.id === post.id),
    );
    expect(listed.posts.find((p) => p.id === post.id)?.status).toBe('published');
  });
});
