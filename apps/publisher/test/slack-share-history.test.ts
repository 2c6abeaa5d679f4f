import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TRunningSim } from '@sps/network-sim';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from '../../api/test/harness.js';
import { libraryImage, waitUntil } from './support.js';

// A Slack file message whose share files.info never shows (the simulator holds it out): past the share wait
// the connector finds the message in the channel's history by its file id, and the post is recorded with
// that message, shared once. Without the history scope the wait fails as before, saying which scope is missing.

describe('Slack share past the wait', () => {
  let api: TTestApi;
  let sim: TRunningSim;

  beforeAll(async () => {
    api = await startTestApi({
      publisher: true,
      stuckAfterMs: 0,
      reconcileEveryMs: 3_600_000,
      processingWait: { intervalMs: 100, maxWaitMs: 500 },
    });
    sim = api.sim!;
    sim.sim.processingMs.slack = 60 * 60_000;
  });
  afterAll(() => api.close());

  /** A post of one library image to the account's Slack channel, published; its id. */
  async function publishImage(apiKey: string, text: string): Promise<string> {
    const url = await libraryImage(api, apiKey);
    const created = await request(api.app)
      .post('/v1/posts')
      .set(bearer(apiKey))
      .send({ content: text, platforms: ['slack'], media: { images: [{ url }], video: null } });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect((await request(api.app).post(`/v1/posts/${id}/publish`).set(bearer(apiKey))).status).toBe(200);
    return id;
  }
  const segment = (id: string) =>
    api.db.segmentDelivery.findFirst({ where: { postId: id, platform: 'slack' } });
  const completions = (text: string) =>
    sim.sim.requests.filter(
      (r) => r.path.endsWith('/files.completeUploadExternal') && JSON.stringify(r.body).includes(text),
    );

  it('records the message found in conversations.history, shared once', async () => {
    const account = await api.account('pro');
    await api.connect(account.accountId, 'slack');
    const text = `ssh-found-${Date.now()}`;
    const id = await publishImage(account.apiKey, text);
    await waitUntil(
      'the post to be published',
      async () => (await api.db.post.findUniqueOrThrow({ where: { id } })).status === 'published',
      20_000,
      50,
    );
    const posts = sim.sim.postsOf('slack').filter((p) => p.text === text);
    expect(posts).toHaveLength(1);
    expect((await segment(id))?.remoteId).toBe(posts[0]?.remoteId);
    expect(completions(text)).toHaveLength(1);
  });

  it('without channels:history the wait fails as before and the failure names the scope', async () => {
    const account = await api.account('pro');
    // The simulator reads a token containing "nohistory" as a bot without the history scopes.
    await api.connect(account.accountId, 'slack', 'slack-nohistory');
    const text = `ssh-noscope-${Date.now()}`;
    const id = await publishImage(account.apiKey, text);
    await waitUntil(
      'the failed wait to be recorded',
      async () => Boolean((await segment(id))?.error?.includes('channels:history')),
      20_000,
      50,
    );
    expect((await segment(id))?.error).toMatch(/still processing the share.*missing_scope/);
    expect((await api.db.post.findUniqueOrThrow({ where: { id } })).status).not.toBe('published');
    expect(completions(text)).toHaveLength(1);
  });
});
