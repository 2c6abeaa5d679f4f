import { describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { createNetworkSimApp } from '../src/server.js';
import { SimState } from '../src/sim-state.js';
import { graphemes, threadsTextLength, xTextLength } from '../src/text-limits.sim.js';

// Each simulator refuses a text its network refuses as too long, counted as that network counts, with the
// network's own error shape; a text exactly at the limit goes through, so the unit is the one shown.
const sim = new SimState();
const app = createNetworkSimApp(sim);
const bearer = { authorization: 'Bearer sim-token' };
const stored = (platform: 'twitter' | 'threads' | 'facebook' | 'linkedin' | 'bluesky' | 'mastodon') =>
  sim.postsOf(platform).length;

/** A link that X and Mastodon count as 23, whatever its length. */
const LINK = `https://example.com/${'p'.repeat(300)}`;

describe('the simulator counts as the networks do', () => {
  it('segments graphemes in windows without splitting a cluster at a window edge', () => {
    const whole = (t: string) =>
      Array.from(new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(t)).length;
    const texts = [
      'a'.repeat(1023) + '👨‍👩‍👧‍👦'.repeat(300),
      '🇫🇷'.repeat(2000),
      `x${'\u0301'.repeat(5000)}y`,
      'e\u0301'.repeat(3000),
      '',
    ];
    for (const text of texts) expect(graphemes(text)).toBe(whole(text));
  });

  it('weighs X texts with twitter-text and Threads emoji by their UTF-8 bytes', () => {
    expect(xTextLength('日本'.repeat(70))).toBe(280);
    expect(xTextLength(`${'a'.repeat(256)} ${LINK}`)).toBe(280);
    expect(threadsTextLength('👍🏽')).toBe(8);
    expect(threadsTextLength('é')).toBe(1);
  });
});

describe('X: POST /2/tweets', () => {
  const tweet = (text: string) => request(app).post('/twitter/2/tweets').set(bearer).send({ text });

  it('refuses more than 280 weighted characters with the invalid-request problem', async () => {
    const before = stored('twitter');
    const res = await tweet(`${'a'.repeat(257)} ${LINK}`);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      errors: [
        {
          parameters: {},
          message:
            'Your Tweet text is too long. For more information on how Twitter determines text length see https://github.com/twitter/twitter-text.',
        },
      ],
      title: 'Invalid Request',
      detail: 'One or more parameters to your request was invalid.',
      type: 'https://api.twitter.com/2/problems/invalid-request',
    });
    expect((await tweet('😀'.repeat(141))).status).toBe(400);
    expect(stored('twitter')).toBe(before);
  });

  it('takes exactly 280: a long link counts 23, an emoji 2', async () => {
    expect((await tweet(`${'a'.repeat(256)} ${LINK}`)).status).toBe(201);
    expect((await tweet('😀'.repeat(140))).status).toBe(201);
  });
});

describe('Threads: POST /{user}/threads', () => {
  const container = (text: string) =>
    request(app).post('/threads/v1.0/me/threads').set(bearer).send({ media_type: 'TEXT', text });

  it('refuses more than 500 characters, an emoji counting its UTF-8 bytes, with Graph code 100', async () => {
    const res = await container('😀'.repeat(126));
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({
      message: 'Invalid parameter',
      type: 'OAuthException',
      code: 100,
      error_user_msg: expect.stringContaining('504 characters'),
    });
    expect((await container('a'.repeat(501))).status).toBe(400);
  });

  it('takes exactly 500 (125 four-byte emoji)', async () => {
    expect((await container('😀'.repeat(125))).status).toBe(200);
    expect((await container('a'.repeat(500))).status).toBe(200);
  });
});

describe('Instagram: POST /{ig-user}/media', () => {
  const media = (caption: string) =>
    request(app)
      .post('/instagram/v25.0/1789/media')
      .set(bearer)
      .send({ image_url: 'https://cdn.example/a.jpg', caption });
  const tags = (mark: string, n: number) => Array.from({ length: n }, (_, i) => `${mark}tag${i}`).join(' ');

  it('refuses a caption over 2,200 characters, 30 hashtags or 20 @ tags', async () => {
    const long = await media('a'.repeat(2201));
    expect(long.status).toBe(400);
    expect(long.body.error).toMatchObject({
      message: 'Invalid parameter',
      type: 'IGApiException',
      code: 100,
      error_user_msg: 'The caption is 2201 characters; at most 2200 are allowed.',
    });
    expect((await media(tags('#', 31))).body.error.error_user_msg).toBe(
      'The caption has 31 hashtags; at most 30 are allowed.',
    );
    expect((await media(tags('@', 21))).body.error.error_user_msg).toBe(
      'The caption has 21 @ tags; at most 20 are allowed.',
    );
  });

  it('takes 2,200 characters, 30 hashtags and 20 @ tags', async () => {
    for (const caption of ['a'.repeat(2200), tags('#', 30), tags('@', 20)]) {
      expect((await media(caption)).status).toBe(200);
    }
  });
});

describe('Facebook: a Page post, photo or video', () => {
  const page = (edge: string, body: object) =>
    request(app).post(`/facebook/v25.0/555/${edge}`).set(bearer).send(body);

  it('refuses more than 63,206 characters in message, caption or description', async () => {
    const before = stored('facebook');
    const over = 'a'.repeat(63_207);
    const feed = await page('feed', { message: over });
    expect(feed.status).toBe(400);
    expect(feed.body.error).toMatchObject({
      code: 100,
      error_user_msg: 'The message is 63207 characters; at most 63206 are allowed.',
    });
    const photo = await page('photos', { url: 'https://cdn.example/a.jpg', caption: over });
    expect(photo.body.error.error_user_msg).toMatch(/^The caption is 63207/);
    const video = await page('videos', { file_url: 'https://cdn.example/a.mp4', description: over });
    expect(video.body.error.error_user_msg).toMatch(/^The description is 63207/);
    expect(stored('facebook')).toBe(before);
  });

  it('takes exactly 63,206', async () => {
    expect((await page('feed', { message: 'a'.repeat(63_206) })).status).toBe(200);
  });
});

describe('LinkedIn: posts and comments', () => {
  // A version LinkedIn published and still serves (linkedin.sim.ts LINKEDIN_VERSIONS).
  const version = '202607';
  const headers = { ...bearer, 'LinkedIn-Version': version, 'X-Restli-Protocol-Version': '2.0.0' };
  const author = 'urn:li:person:abc';
  const post = (commentary: string) =>
    request(app)
      .post('/linkedin/rest/posts')
      .set(headers)
      .send({ author, commentary, lifecycleState: 'PUBLISHED', visibility: 'PUBLIC' });

  it('refuses commentary over 3,000 characters as shown (escapes not counted) with 422', async () => {
    const res = await post('a'.repeat(3001));
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      status: 422,
      serviceErrorCode: 100,
      code: 'UNPROCESSABLE_ENTITY',
      message: 'ERROR :: /commentary :: length 3001 exceeds the maximum of 3000',
    });
    // 3,200 characters sent, 1,600 shown.
    expect((await post('\\('.repeat(1600))).status).toBe(201);
  });

  it('refuses a comment over 1,250 characters and takes 1,250', async () => {
    const parent = (await post('a'.repeat(3000))).headers['x-restli-id'] as string;
    const comment = (text: string) =>
      request(app)
        .post(`/linkedin/rest/socialActions/${encodeURIComponent(parent)}/comments`)
        .set(headers)
        .send({ actor: author, object: parent, message: { text } });
    const before = stored('linkedin');
    const res = await comment('c'.repeat(1251));
    expect(res.status).toBe(422);
    expect(res.body.message).toBe('ERROR :: /message/text :: length 1251 exceeds the maximum of 1250');
    expect(stored('linkedin')).toBe(before);
    expect((await comment('c'.repeat(1250))).status).toBe(201);
  });
});

describe('Bluesky: com.atproto.repo.createRecord', () => {
  async function createPost(text: string) {
    const session = await request(app)
      .post('/bluesky/xrpc/com.atproto.server.createSession')
      .send({ identifier: 'alice.bsky.social', password: 'app-pass' });
    return request(app)
      .post('/bluesky/xrpc/com.atproto.repo.createRecord')
      .set({ authorization: `Bearer ${session.body.accessJwt}` })
      .send({
        repo: session.body.did,
        collection: 'app.bsky.feed.post',
        record: { $type: 'app.bsky.feed.post', text, createdAt: new Date().toISOString() },
      });
  }

  it("refuses more than 3,000 UTF-8 bytes in the lexicon validator's words, before graphemes", async () => {
    // 1,001 three-byte characters: 3,003 bytes (and over 300 graphemes too; bytes are checked first).
    const res = await createPost('日'.repeat(1001));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'InvalidRequest',
      message: 'Invalid app.bsky.feed.post record: Record/text must not be longer than 3000 characters',
    });
  });

  it('refuses more than 300 graphemes and takes 300 (a ZWJ family is one)', async () => {
    const res = await createPost('a'.repeat(301));
    expect(res.body.message).toBe(
      'Invalid app.bsky.feed.post record: Record/text must not be longer than 300 graphemes',
    );
    expect((await createPost(`${'a'.repeat(299)}👨‍👩‍👧‍👦`)).status).toBe(200);
  });
});

describe('Mastodon: POST /api/v1/statuses', () => {
  const status = (text: string) =>
    request(app).post('/mastodon/api/v1/statuses').set(bearer).send({ status: text });

  it('refuses more than the instance limit with the validation error', async () => {
    const before = stored('mastodon');
    const res = await status('a'.repeat(501));
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ error: 'Validation failed: Text character limit of 500 exceeded' });
    expect((await status(`${'a'.repeat(477)} ${LINK}`)).status).toBe(422);
    expect(stored('mastodon')).toBe(before);
  });

  it('counts a link as 23 and @user@domain as @user', async () => {
    expect((await status(`${'a'.repeat(476)} ${LINK}`)).status).toBe(200);
    const mention = '@alice@a-very-long-instance-name.example.social';
    expect((await status(`${mention} ${'a'.repeat(493)}`)).status).toBe(200);
    expect((await status(`${mention} ${'a'.repeat(494)}`)).status).toBe(422);
  });
});
