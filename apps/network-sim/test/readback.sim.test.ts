import { describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { LINKEDIN_SIM_MEMBER_READ_TOKEN } from '../src/linkedin.sim.js';
import { createNetworkSimApp } from '../src/server.js';

// The read endpoints behind the publisher's read-back refuse what the networks refuse, with their bodies.
const app = createNetworkSimApp();

describe('read-back endpoints of the simulator', () => {
  it('X: max_results outside 5-100 is an invalid request; a user without posts has meta only', async () => {
    const auth = { authorization: 'Bearer x' };
    const tooMany = await request(app).get('/twitter/2/users/1/tweets').query({ max_results: 101 }).set(auth);
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.title).toBe('Invalid Request');
    const tooFew = await request(app).get('/twitter/2/users/1/tweets').query({ max_results: 4 }).set(auth);
    expect(tooFew.status).toBe(400);
    const none = await request(app).get('/twitter/2/users/1/tweets').set(auth);
    expect(none.body).toEqual({ meta: { result_count: 0 } });
    expect((await request(app).get('/twitter/2/users/1/tweets')).status).toBe(401);
  });

  it('LinkedIn: the author finder needs X-RestLi-Method FINDER, and r_member_social for a member', async () => {
    const headers = {
      authorization: `Bearer ${LINKEDIN_SIM_MEMBER_READ_TOKEN}`,
      'linkedin-version': '202607',
      'x-restli-protocol-version': '2.0.0',
    };
    const query = { q: 'author', author: 'urn:li:person:abc' };
    const noMethod = await request(app).get('/linkedin/rest/posts').query(query).set(headers);
    expect(noMethod.status).toBe(400);
    const denied = await request(app)
      .get('/linkedin/rest/posts')
      .query(query)
      .set({ ...headers, authorization: 'Bearer plain', 'x-restli-method': 'FINDER' });
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ status: 403, code: 'ACCESS_DENIED' });
    const granted = await request(app)
      .get('/linkedin/rest/posts')
      .query(query)
      .set({ ...headers, 'x-restli-method': 'FINDER' });
    expect(granted.status).toBe(200);
    expect(granted.body).toEqual({ paging: { start: 0, count: 10, links: [], total: 0 }, elements: [] });
  });

  it('Slack: history without channels:history is missing_scope, a thread that does not exist thread_not_found', async () => {
    const scope = await request(app)
      .get('/slack/conversations.history')
      .query({ channel: 'C123' })
      .set({ authorization: 'Bearer xoxb-nohistory' });
    expect(scope.body).toMatchObject({ ok: false, error: 'missing_scope', needed: expect.any(String) });
    const thread = await request(app)
      .get('/slack/conversations.replies')
      .query({ channel: 'C123', ts: '1.000001' })
      .set({ authorization: 'Bearer xoxb' });
    expect(thread.body).toEqual({ ok: false, error: 'thread_not_found' });
  });

  it('Discord: limit 1-100, one of around/before/after, and Missing Access without READ_MESSAGE_HISTORY', async () => {
    const auth = { authorization: 'Bot t' };
    const limit = await request(app).get('/discord/channels/1100/messages').query({ limit: 101 }).set(auth);
    expect(limit.status).toBe(400);
    expect(limit.body.code).toBe(50035);
    const both = await request(app)
      .get('/discord/channels/1100/messages')
      .query({ after: '1', before: '2' })
      .set(auth);
    expect(both.body.code).toBe(50035);
    const denied = await request(app).get('/discord/channels/nohistory-1/messages').set(auth);
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ message: 'Missing Access', code: 50001 });
  });

  it('Graph list edges: since/until must be timestamps', async () => {
    const bad = await request(app)
      .get('/facebook/v25.0/page-1/published_posts')
      .query({ since: 'not a time', fields: 'id' })
      .set({ authorization: 'Bearer p' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe(100);
  });
});
