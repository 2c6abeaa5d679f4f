import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';

// Media each network cannot take is refused when the post is created or changed (not at publish),
// naming the item in the caller's field names: B 422 `media_not_supported`, A 400.

interface TIssue {
  field: string;
  message: string;
}

const cdn = (name: string) => `https://cdn.example.com/${name}`;
const tomorrow = () => new Date(Date.now() + 86_400_000).toISOString();

describe('media rules at create and update', () => {
  let api: TTestApi;
  let key: string;

  beforeAll(async () => {
    api = await startTestApi();
    ({ apiKey: key } = await api.account('pro'));
  });
  afterAll(() => api.close());

  const postB = (body: object) => request(api.app).post('/v1/posts').set(bearer(key)).send(body);
  const putB = (id: string, body: object) =>
    request(api.app).put(`/v1/posts/${id}`).set(bearer(key)).send(body);
  const postA = (body: object) => request(api.app).post('/api/posts').set(bearer(key)).send(body);
  const putA = (id: string, body: object) =>
    request(api.app).put(`/api/posts/${id}`).set(bearer(key)).send(body);

  function expectMediaB(res: request.Response, field: string, message: string) {
    expect(res.status).toBe(422);
    expect(Object.keys(res.body).sort()).toEqual(['code', 'details', 'error']);
    expect(res.body.code).toBe('media_not_supported');
    expect(res.body.details.field).toBe(field);
    expect(res.body.error).toContain(field);
    expect((res.body.details.issues as TIssue[]).map((i) => i.field)).toContain(field);
    expect(res.body.details.issues[0].message).toContain(message);
  }

  function expectMediaA(res: request.Response, field: string, message: string) {
    expect(res.status).toBe(400);
    expect(res.body.code).toBeUndefined();
    expect(res.body.error).toContain(field);
    expect(res.body.fix).toEqual(expect.any(String));
    expect(res.body.details.field).toBe(field);
    expect(res.body.details.issues[0].message).toContain(message);
  }

  describe('Variant B', () => {
    it('refuses a video type the network does not take, naming media.video', async () => {
      const res = await postB({
        content: 'clip',
        platforms: ['twitter'],
        media: { video: { url: cdn('clip.webm') } },
      });
      expectMediaB(res, 'media.video', 'twitter does not accept .webm videos');
    });

    it('refuses a PNG for instagram, naming media.images.2', async () => {
      const res = await postB({
        content: 'pics',
        platforms: ['instagram'],
        media: { images: [{ url: cdn('a.jpg') }, { url: cdn('b.jpeg') }, { url: cdn('c.png') }] },
      });
      expectMediaB(res, 'media.images.2', 'instagram does not accept .png images');
    });

    it('refuses images for youtube, and names segment items as segments.N.media_urls.M', async () => {
      expectMediaB(
        await postB({ content: 'pics', platforms: ['youtube'], media: { images: [{ url: cdn('a.jpg') }] } }),
        'media.images.0',
        'youtube needs a video',
      );
      const res = await postB({
        content: 'thread',
        platforms: ['twitter'],
        segments: [{ content: 'one' }, { content: 'two', media_urls: [cdn('a.jpg'), cdn('b.gif')] }],
      });
      expectMediaB(res, 'segments.1.media_urls.1', 'animated GIF only as');
    });

    it('lets a draft lack media a network needs, but not a scheduled post', async () => {
      const draft = await postB({ content: 'later', platforms: ['youtube'] });
      expect(draft.status).toBe(201);
      expectMediaB(
        await postB({ content: 'later', platforms: ['instagram'], scheduled_for: tomorrow() }),
        'media',
        'instagram needs an image or a video',
      );
      // Scheduling the draft without adding the video is refused too, and changes nothing.
      expectMediaB(
        await putB(draft.body.id, { scheduled_for: tomorrow() }),
        'media',
        'youtube needs a video',
      );
      const after = await request(api.app).get(`/v1/posts/${draft.body.id}`).set(bearer(key));
      expect(after.body.status).toBe('draft');
    });

    it('checks an update against the post as it will be: new platforms with the stored media', async () => {
      const created = await postB({
        content: 'png',
        platforms: ['twitter'],
        media: { images: [{ url: cdn('a.png'), alt_text: 'alt' }] },
      });
      expect(created.status).toBe(201);
      expectMediaB(
        await putB(created.body.id, { platforms: ['tiktok'] }),
        'media.images.0',
        'tiktok does not accept .png',
      );
      const unchanged = await request(api.app).get(`/v1/posts/${created.body.id}`).set(bearer(key));
      expect(unchanged.body.platforms).toEqual(['twitter']);
      const ok = await putB(created.body.id, {
        platforms: ['tiktok'],
        media: { images: [{ url: cdn('a.webp'), alt_text: 'alt' }] },
      });
      expect(ok.status).toBe(200);
      expect(ok.body.media.images).toEqual([{ url: cdn('a.webp'), alt_text: 'alt' }]);
    });

    it('accepts what each network takes, and URLs without a known extension', async () => {
      const res = await postB({
        content: 'fine',
        platforms: ['twitter', 'bluesky', 'mastodon', 'threads', 'linkedin', 'facebook'],
        media: { images: [{ url: cdn('a.jpg') }, { url: cdn('b.png') }, { url: `${cdn('render')}?id=3` }] },
      });
      expect(res.status).toBe(201);
    });
  });

  describe('Variant A', () => {
    it('refuses on create with 400 naming mediaUrls.N', async () => {
      const res = await postA({
        content: 'clip',
        platforms: ['twitter'],
        mediaUrls: [cdn('a.jpg'), cdn('b.jpg'), cdn('c.gif')],
      });
      expectMediaA(res, 'mediaUrls.2', 'animated GIF');
    });

    it('names segment items as segments.N.mediaUrls.M and checks updates', async () => {
      const res = await postA({
        content: 'thread',
        platforms: ['twitter'],
        segments: [{ content: 'one', mediaUrls: [cdn('clip.webm')] }],
      });
      expectMediaA(res, 'segments.0.mediaUrls.0', 'twitter does not accept .webm videos');

      const created = await postA({ content: 'ok', platforms: ['bluesky'], mediaUrls: [cdn('clip.webm')] });
      expect(created.status).toBe(201);
      const moved = await putA(created.body.post.id, { content: 'ok', platforms: ['twitter'] });
      expectMediaA(moved, 'mediaUrls.0', 'twitter does not accept .webm videos');
    });
  });
});

describe('media rules through MCP', () => {
  let api: TTestApi;
  let server: Server;
  let client: Client;

  beforeAll(async () => {
    api = await startTestApi();
    const { apiKey } = await api.account('pro');
    server = await new Promise((resolve) => {
      const s = api.app.listen(0, '127.0.0.1', () => resolve(s));
    });
    client = new Client({ name: 'media-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(
        new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`),
        {
          requestInit: { headers: { Authorization: `Bearer ${apiKey}` } },
        },
      ),
    );
  });
  afterAll(async () => {
    await client.close();
    await new Promise((r) => server.close(r));
    await api.close();
  });

  it('create_post and update_post return the refusal as a tool error naming the item', async () => {
    const created = (await client.callTool({
      name: 'create_post',
      arguments: { content: 'pics', platforms: ['instagram'], media: { images: [{ url: cdn('a.gif') }] } },
    })) as { isError?: boolean; structuredContent?: Record<string, unknown> };
    expect(created.isError).toBe(true);
    expect(created.structuredContent?.code).toBe('media_not_supported');
    expect((created.structuredContent?.details as { issues: TIssue[] } | undefined)?.issues[0]?.field).toBe(
      'media.images.0',
    );

    const draft = (await client.callTool({
      name: 'create_post',
      arguments: { content: 'pics', platforms: ['twitter'], media: { images: [{ url: cdn('a.gif') }] } },
    })) as { isError?: boolean; structuredContent?: Record<string, unknown> };
    expect(draft.isError).toBeFalsy();
    const updated = (await client.callTool({
      name: 'update_post',
      arguments: { id: draft.structuredContent?.id, platforms: ['instagram'] },
    })) as { isError?: boolean; structuredContent?: Record<string, unknown> };
    expect(updated.isError).toBe(true);
    expect(updated.structuredContent?.code).toBe('media_not_supported');
  });
});
