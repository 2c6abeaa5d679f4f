import { describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { createNetworkSimApp } from '../src/server.js';

// What the networks give back of a post's text: X's t.co links and entities, Slack's link markup.
const app = createNetworkSimApp();

describe('posted text as the networks show it', () => {
  it('X: links become t.co in the text, entities.urls name their targets (a bare domain as http://)', async () => {
    const auth = { authorization: 'Bearer token-links' };
    const created = await request(app)
      .post('/twitter/2/tweets')
      .set(auth)
      .send({ text: 'Read https://blog.example.com/a or example.com' });
    expect(created.status).toBe(201);
    expect(created.body.data.text).toMatch(/^Read https:\/\/t\.co\/\w{10} or https:\/\/t\.co\/\w{10}$/);
    const me = await request(app).get('/twitter/2/users/me').set(auth);
    const timeline = await request(app)
      .get(`/twitter/2/users/${me.body.data.id}/tweets`)
      .query({ 'tweet.fields': 'created_at,entities' })
      .set(auth);
    const tweet = timeline.body.data[0];
    expect(tweet.text).toBe(created.body.data.text);
    expect(tweet.entities.urls).toEqual([
      {
        start: 5,
        end: 28,
        url: expect.stringMatching(/^https:\/\/t\.co\//),
        expanded_url: 'https://blog.example.com/a',
        display_url: 'blog.example.com/a',
      },
      {
        start: 32,
        end: 55,
        url: expect.stringMatching(/^https:\/\/t\.co\//),
        expanded_url: 'http://example.com',
        display_url: 'example.com',
      },
    ]);
    // Without tweet.fields=entities there are none.
    const plain = await request(app).get(`/twitter/2/users/${me.body.data.id}/tweets`).set(auth);
    expect(plain.body.data[0].entities).toBeUndefined();
  });

  it('X: the same text again from the same account is 403 duplicate content; once deleted it may be posted', async () => {
    const auth = { authorization: 'Bearer token-dup' };
    const first = await request(app).post('/twitter/2/tweets').set(auth).send({ text: 'only once please' });
    expect(first.status).toBe(201);
    const again = await request(app).post('/twitter/2/tweets').set(auth).send({ text: 'only once please' });
    expect(again.status).toBe(403);
    expect(again.body).toEqual({
      detail: 'You are not allowed to create a Tweet with duplicate content.',
      type: 'about:blank',
      title: 'Forbidden',
      status: 403,
    });
    await request(app).delete(`/twitter/2/tweets/${first.body.data.id}`).set(auth);
    expect(
      (await request(app).post('/twitter/2/tweets').set(auth).send({ text: 'only once please' })).status,
    ).toBe(201);
  });

  it('Mastodon: statuses come back as HTML, newest first, 40 at most, paged by Link; read:statuses needed', async () => {
    const auth = { authorization: 'Bearer masto-list' };
    const me = await request(app).get('/mastodon/api/v1/accounts/verify_credentials').set(auth);
    for (const n of [1, 2, 3]) {
      await request(app)
        .post('/mastodon/api/v1/statuses')
        .set(auth)
        .send({ status: `n${n} <b> https://blog.example.com/${n}\nnext` });
    }
    const list = await request(app)
      .get(`/mastodon/api/v1/accounts/${me.body.id}/statuses`)
      .query({ limit: 2 })
      .set(auth);
    expect(list.status).toBe(200);
    expect(list.body).toHaveLength(2);
    expect(list.body[0].content).toBe(
      '<p>n3 &lt;b&gt; <a href="https://blog.example.com/3" target="_blank" rel="nofollow noopener" translate="no">' +
        '<span class="invisible">https://</span><span class="">blog.example.com/3</span><span class="invisible"></span></a>' +
        '<br />next</p>',
    );
    expect(list.headers.link).toContain(`max_id=${list.body[1].id}>; rel="next"`);
    const older = await request(app)
      .get(`/mastodon/api/v1/accounts/${me.body.id}/statuses`)
      .query({ limit: 2, max_id: list.body[1].id })
      .set(auth);
    expect(older.body.map((s: { content: string }) => s.content.slice(0, 5))).toEqual(['<p>n1']);
    const noScope = await request(app)
      .get(`/mastodon/api/v1/accounts/${me.body.id}/statuses`)
      .set({ authorization: 'Bearer noread-token' });
    expect(noScope.status).toBe(403);
    expect(noScope.body).toEqual({ error: 'This action is outside the authorized scopes' });
  });

  it('Slack: a link is kept as <url>, one typed without a scheme as <http://…|as typed>', async () => {
    const auth = { authorization: 'Bearer xoxb-links' };
    const posted = await request(app)
      .post('/slack/chat.postMessage')
      .set(auth)
      .send({ channel: 'C777', text: 'Read https://blog.example.com/a or example.com' });
    expect(posted.body.message.text).toBe(
      'Read <https://blog.example.com/a> or <http://example.com|example.com>',
    );
    const history = await request(app)
      .get('/slack/conversations.history')
      .query({ channel: 'C777' })
      .set(auth);
    expect(history.body.messages[0].text).toBe(posted.body.message.text);
  });
});
