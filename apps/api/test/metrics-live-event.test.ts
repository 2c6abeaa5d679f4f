import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import type { TLiveEvent } from '../src/dashboard/live-events.js';
import { bearer, startTestApi, type TTestApi } from './harness.js';
import { createB, pollUntil, settleB } from './pipeline-helpers.js';

// A collection of a post's figures that lands in the publisher tells the account's open dashboard streams
// (`post.metrics` with the post id, through the Redis change notices), and nobody else's, so an open
// Figures panel or the Analytics page reads them again without a reload.

describe('live event when a collection lands', () => {
  let api: TTestApi;

  beforeAll(async () => {
    api = await startTestApi({ publisher: true });
  });
  afterAll(async () => {
    await api.live.close();
    await api.close();
  });

  const listen = (accountId: string) => {
    const events: TLiveEvent[] = [];
    const stop = api.live.open(accountId, {
      send: (event) => {
        events.push(event);
        return true;
      },
      end: () => undefined,
    });
    return { events, stop };
  };

  it('sends post.metrics to the post’s account after a refresh, not to another account', async () => {
    const { apiKey: key, accountId } = await api.account('pro');
    const other = await api.account('pro');
    await api.connect(accountId, 'mastodon');
    const mine = listen(accountId);
    const theirs = listen(other.accountId);
    try {
      const post = await createB(api, key, { content: 'live figures', platforms: ['mastodon'] });
      expect((await request(api.app).post(`/v1/posts/${post.id}/publish`).set(bearer(key))).status).toBe(200);
      expect((await settleB(api, key, post.id)).status).toBe('published');
      // The stream is subscribed by now: the outbox's post.published came through it.
      await pollUntil(
        async () => mine.events,
        (events) => events.some((e) => e.type === 'post.published' && e.post_id === post.id),
      );
      expect(mine.events.some((e) => e.type === 'post.metrics')).toBe(false);

      expect(
        (await request(api.app).post(`/v1/posts/${post.id}/metrics/refresh`).set(bearer(key))).status,
      ).toBe(202);
      const events = await pollUntil(
        async () => mine.events,
        (list) => list.some((e) => e.type === 'post.metrics'),
      );
      expect(events.filter((e) => e.type === 'post.metrics')).toEqual([
        { type: 'post.metrics', post_id: post.id },
      ]);
      // The figures the event announces are there to read.
      const figures = await request(api.app).get(`/v1/posts/${post.id}/metrics`).set(bearer(key));
      expect(figures.body.platforms.mastodon.collected_at).toEqual(expect.any(String));
      expect(theirs.events).toEqual([]);
    } finally {
      mine.stop();
      theirs.stop();
    }
  });
});
