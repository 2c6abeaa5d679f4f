import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { nextMonthStart } from '@sps/core';
import { usageMonth } from '@sps/db';
import request from 'supertest';
import { loadEnv } from '../src/env.js';
import { startTestApi, type TTestApi } from './harness.js';

// Variant A's monthly twitter allowance, counted in PostgreSQL (usage_counters) per calendar month in UTC.

it('parses the allowance per plan and keeps defaults for unlisted plans', () => {
  expect(loadEnv({}).twitterAllowance).toEqual({ none: 0, free: 100, starter: 1000, pro: 10000 });
  expect(loadEnv({ TWITTER_MONTHLY_ALLOWANCE: 'free=5, pro=7' }).twitterAllowance).toEqual({
    none: 0,
    free: 5,
    starter: 1000,
    pro: 7,
  });
  expect(() => loadEnv({ TWITTER_MONTHLY_ALLOWANCE: 'gold=5' })).toThrow(/TWITTER_MONTHLY_ALLOWANCE/);
});

it('months are calendar months in UTC', () => {
  expect(usageMonth(new Date('2026-12-31T23:59:59.999Z'))).toBe('2026-12');
  expect(usageMonth(new Date('2027-01-01T00:00:00.000Z'))).toBe('2027-01');
  expect(nextMonthStart(new Date('2026-12-31T23:30:00-05:00')).toISOString()).toBe(
    '2027-02-01T00:00:00.000Z',
  );
  expect(nextMonthStart(new Date('2026-12-15T12:00:00Z')).toISOString()).toBe('2027-01-01T00:00:00.000Z');
});

describe('Variant A twitter monthly allowance', () => {
  let api: TTestApi;
  beforeAll(async () => {
    api = await startTestApi({
      publisher: true,
      env: { TWITTER_MONTHLY_ALLOWANCE: 'free=2,starter=3,pro=4' },
    });
  });
  afterAll(() => api.close());

  const send = (apiKey: string, method: 'post' | 'put', path: string, body?: object) => {
    const req = request(api.app)[method](path).set('x-api-key', apiKey);
    return body ? req.send(body) : req;
  };
  const usage = async (accountId: string) =>
    (
      await api.db.usageCounter.findUnique({
        where: {
          accountId_platform_month: { accountId, platform: 'twitter', month: usageMonth(new Date()) },
        },
      })
    )?.count ?? 0;

  it('counts twitter publishes and answers 403 with the remaining allowance once used up', async () => {
    const { apiKey, accountId } = await api.account('free');
    await api.connect(accountId, 'twitter');
    await api.connect(accountId, 'bluesky');
    // A month long gone does not count.
    await api.db.usageCounter.create({
      data: { accountId, platform: 'twitter', month: '2000-01', count: 99 },
    });

    const first = await send(apiKey, 'post', '/api/posts', {
      content: 'one',
      platforms: ['twitter'],
      published: true,
    });
    expect(first.status).toBe(201);
    expect(await usage(accountId)).toBe(1);
    // A draft that lists twitter uses nothing until it is published.
    const draft = await send(apiKey, 'post', '/api/posts', {
      content: 'two',
      platforms: ['twitter', 'bluesky'],
    });
    expect(draft.status).toBe(201);
    const spare = await send(apiKey, 'post', '/api/posts', { content: 'three', platforms: ['twitter'] });
    expect(spare.status).toBe(201);
    expect(await usage(accountId)).toBe(1);
    expect((await send(apiKey, 'post', `/api/posts/${draft.body.post.id}/publish`)).status).toBe(200);
    expect(await usage(accountId)).toBe(2);

    const resetsAt = nextMonthStart(new Date()).toISOString();
    const details = {
      platform: 'twitter',
      plan: 'free',
      allowance: 2,
      used: 2,
      remaining: 0,
      resets_at: resetsAt,
    };
    const before = await api.db.post.count({ where: { accountId } });
    for (const body of [
      { content: 'create', platforms: ['twitter'], published: true },
      { content: 'create draft', platforms: ['bluesky', 'twitter'] },
    ]) {
      const refused = await send(apiKey, 'post', '/api/posts', body);
      expect(refused.status).toBe(403);
      expect(refused.body).toEqual({
        error: 'The monthly twitter publishing allowance of the free plan (2) is used up',
        fix: `Publish to other networks, wait until ${resetsAt} when the allowance starts over, or upgrade the plan.`,
        details,
      });
    }
    expect(await api.db.post.count({ where: { accountId } })).toBe(before);

    // Publishing an existing twitter draft is refused and leaves it a draft; so is an update that publishes.
    const publish = await send(apiKey, 'post', `/api/posts/${spare.body.post.id}/publish`);
    expect(publish.status).toBe(403);
    expect(publish.body.details).toEqual(details);
    const update = await send(apiKey, 'put', `/api/posts/${spare.body.post.id}`, {
      content: 'changed',
      platforms: ['twitter'],
      published: true,
    });
    expect(update.status).toBe(403);
    const kept = await api.db.post.findUniqueOrThrow({ where: { id: spare.body.post.id } });
    expect({ status: kept.status, content: kept.content, attempt: kept.publishAttempt }).toEqual({
      status: 'draft',
      content: 'three',
      attempt: 0,
    });
    expect(await usage(accountId)).toBe(2);

    // Other networks are not limited.
    expect(
      (await send(apiKey, 'post', '/api/posts', { content: 'bsky', platforms: ['bluesky'], published: true }))
        .status,
    ).toBe(201);
  });

  it('has an allowance per plan and per account', async () => {
    const starter = await api.account('starter');
    await api.connect(starter.accountId, 'twitter');
    for (let i = 0; i < 3; i += 1) {
      expect(
        (
          await send(starter.apiKey, 'post', '/api/posts', {
            content: `s${i}`,
            platforms: ['twitter'],
            published: true,
          })
        ).status,
      ).toBe(201);
    }
    const refused = await send(starter.apiKey, 'post', '/api/posts', {
      content: 's3',
      platforms: ['twitter'],
      published: true,
    });
    expect(refused.status).toBe(403);
    expect(refused.body.details).toMatchObject({ plan: 'starter', allowance: 3, used: 3, remaining: 0 });
    const none = await api.account('none');
    expect(
      (await send(none.apiKey, 'post', '/api/posts', { content: 'n', platforms: ['twitter'] })).body.details,
    ).toEqual({ plan: 'none' });
  });

  it('concurrent publishes never take more than the allowance', async () => {
    const { apiKey, accountId } = await api.account('pro');
    await api.connect(accountId, 'twitter');
    const ids: string[] = [];
    for (let i = 0; i < 10; i += 1) {
      const res = await send(apiKey, 'post', '/api/posts', { content: `race ${i}`, platforms: ['twitter'] });
      expect(res.status).toBe(201);
      ids.push(res.body.post.id);
    }
    const answers = await Promise.all(ids.map((id) => send(apiKey, 'post', `/api/posts/${id}/publish`)));
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 200, 200, 200, 403, 403, 403, 403, 403, 403]);
    expect(await usage(accountId)).toBe(4);
    expect(await api.db.post.count({ where: { accountId, status: 'draft' } })).toBe(6);
  });
});

describe('scheduled posts that fire take from the twitter allowance', () => {
  let api: TTestApi;
  beforeAll(async () => {
    api = await startTestApi({ publisher: true, env: { TWITTER_MONTHLY_ALLOWANCE: 'free=2' } });
  });
  afterAll(() => api.close());

  const usage = async (accountId: string) =>
    (
      await api.db.usageCounter.findUnique({
        where: {
          accountId_platform_month: { accountId, platform: 'twitter', month: usageMonth(new Date()) },
        },
      })
    )?.count ?? 0;
  const waitFinal = async (apiKey: string, id: string) => {
    for (let i = 0; i < 150; i += 1) {
      const res = await request(api.app).get(`/v1/posts/${id}`).set('authorization', `Bearer ${apiKey}`);
      if (res.body.status === 'published' || res.body.status === 'failed') return res.body;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`post ${id} did not finish`);
  };

  it('counts Variant A posts when they fire; a used-up allowance fails twitter only, with the reason', async () => {
    const { apiKey, accountId } = await api.account('free');
    await api.connect(accountId, 'twitter');
    await api.connect(accountId, 'bluesky');
    const soon = (ms: number) => new Date(Date.now() + ms).toISOString();
    const schedule = async (content: string, platforms: string[], at: string) => {
      const res = await request(api.app)
        .post('/api/posts')
        .set('x-api-key', apiKey)
        .send({ content, platforms, scheduledFor: at });
      expect(res.status).toBe(201);
      return res.body.post.id as string;
    };
    // Two units: all three are accepted while units are left; the one that fires third finds none.
    const first = await schedule('fires first', ['twitter'], soon(1500));
    const second = await schedule('fires second', ['twitter', 'bluesky'], soon(2500));
    const third = await schedule('fires third', ['twitter', 'bluesky'], soon(3500));
    const onlyTwitter = await schedule('fires last', ['twitter'], soon(4500));
    expect(await usage(accountId)).toBe(0);

    expect((await waitFinal(apiKey, first)).status).toBe('published');
    expect((await waitFinal(apiKey, second)).status).toBe('published');
    expect(await usage(accountId)).toBe(2);

    const partial = await waitFinal(apiKey, third);
    expect(partial.status).toBe('published');
    expect(partial.platform_results.bluesky.success).toBe(true);
    expect(partial.platform_results.twitter.success).toBe(false);
    expect(partial.platform_results.twitter.error).toMatch(/allowance of the free plan \(2\) is used up/);
    expect(partial.platform_results.twitter.error).toMatch(/upgrade the plan/);

    const none = await waitFinal(apiKey, onlyTwitter);
    expect(none.status).toBe('failed');
    expect(none.platform_results.twitter.error).toMatch(/allowance/);
    expect(await usage(accountId)).toBe(2);
    // Nothing of the refused ones reached twitter.
    const tweets = (api.sim?.sim.postsOf('twitter') ?? []).map((p) => p.text);
    expect(tweets).toEqual(expect.arrayContaining(['fires first', 'fires second']));
    expect(tweets).not.toContain('fires third');
    expect(tweets).not.toContain('fires last');
  });

  it('Variant B scheduled posts of the same account do not count', async () => {
    const { apiKey, accountId } = await api.account('free');
    await api.connect(accountId, 'twitter');
    await api.db.usageCounter.create({
      data: { accountId, platform: 'twitter', month: usageMonth(new Date()), count: 2 },
    });
    const res = await request(api.app)
      .post('/v1/posts')
      .set('authorization', `Bearer ${apiKey}`)
      .send({
        content: 'B does not count',
        platforms: ['twitter'],
        scheduled_for: new Date(Date.now() + 1500).toISOString(),
      });
    expect(res.status).toBe(201);
    expect((await waitFinal(apiKey, res.body.id)).status).toBe('published');
    expect(await usage(accountId)).toBe(2);
  });
});
