import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { fakeMp4, openCredentials, sealCredentials } from '@sps/core';
import request from 'supertest';
import { bearer, startTestApi, type TTestApi } from './harness.js';
import { connectFlow } from './oauth-helpers.js';
import { createB, settleB, simPosts, uniqueMarker } from './pipeline-helpers.js';

// Issue 21, "Facebook video per Meta's current page": a Page connected through Facebook Login keeps the
// long-lived user token sealed next to the Page token; a video post goes up with the Resumable Upload API
// (the user token, the operator's app id) and is published on the video host with the handle.

const redirect = 'https://app.example/cb';
const CLIP = Buffer.from(fakeMp4(6, 50_000));
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('Facebook video through the HTTP pipeline', () => {
  let api: TTestApi;
  let clips: Server;
  let clipUrl: string;

  beforeAll(async () => {
    api = await startTestApi({ publisher: true });
    clips = createServer((_req, res) => res.writeHead(200, { 'content-type': 'video/mp4' }).end(CLIP));
    await new Promise<void>((resolve) => clips.listen(0, '127.0.0.1', resolve));
    clipUrl = `http://127.0.0.1:${(clips.address() as AddressInfo).port}/clip.mp4`;
  });
  afterAll(async () => {
    await new Promise((resolve) => clips.close(resolve));
    await api.close();
  });

  const requests = (part: string) =>
    (api.sim?.sim.requests ?? []).filter((r) => r.platform === 'facebook' && r.path.includes(part));

  async function connectPage(user: string): Promise<{ apiKey: string; id: string }> {
    const { apiKey } = await api.account('pro');
    const flow = await connectFlow(api, apiKey, { platform: 'facebook', redirect_uri: redirect }, user);
    const ids = new URL(flow.callback.headers.location ?? '').searchParams.get('account_ids') ?? '';
    const id = ids.split(',')[0] ?? '';
    expect(id).not.toBe('');
    return { apiKey, id };
  }

  async function publishVideo(apiKey: string, marker: string) {
    const post = await createB(api, apiKey, {
      content: `video ${marker}`,
      media: { images: [], video: { url: clipUrl } },
      platforms: ['facebook'],
    });
    expect((await request(api.app).post(`/v1/posts/${post.id}/publish`).set(bearer(apiKey))).status).toBe(
      200,
    );
    return settleB(api, apiKey, post.id, 20_000);
  }

  it('connects, keeps the user token sealed, uploads the exact bytes and publishes the handle', async () => {
    const { apiKey, id } = await connectPage('vida');
    const row = await api.db.socialAccount.findUniqueOrThrow({ where: { id } });
    const credentials = openCredentials(row.credentialsEncrypted, api.env.encryptionKey, id);
    const userToken = credentials.extra?.userToken ?? '';
    expect(userToken).not.toBe('');
    expect(userToken).not.toBe(credentials.token);
    expect(Date.parse(credentials.extra?.userTokenExpiresAt ?? '')).toBeGreaterThan(Date.now());
    expect(row.credentialsEncrypted).not.toContain(userToken);

    const marker = uniqueMarker('fbv');
    const before = requests('/upload').length;
    const done = await publishVideo(apiKey, marker);
    const result = done.platform_results?.facebook;
    if (!result?.success) throw new Error(`not published: ${JSON.stringify(result)}`);
    const [post] = simPosts(api, 'facebook', marker);
    expect(post?.media).toMatchObject({
      video: { length: CLIP.length, sha256: sha(CLIP), fileType: 'video/mp4' },
    });
    const uploads = requests('/upload').slice(before);
    expect(uploads.map((r) => r.headers.authorization)).toEqual(uploads.map(() => `OAuth ${userToken}`));
    // The session is opened on the operator's app (the simulator's client id in tests).
    expect(uploads[0]?.path).toMatch(/\/v25\.0\/sps-sim-client\/uploads\?/);
    const publish = requests('/videos').at(-1);
    expect(publish?.headers.authorization).toBe(`Bearer ${credentials.token}`);
    expect(publish?.body).toMatchObject({ fbuploader_video_file_chunk: expect.any(String) });
    // The simulator, like the guide, takes a user token for the session: the Page token is refused.
    const withPage = await fetch(
      `${api.sim?.baseUrls.facebook}/v25.0/sps-sim-client/uploads?file_name=a.mp4&file_length=10&file_type=video/mp4`,
      { method: 'POST', headers: { authorization: `OAuth ${credentials.token}` } },
    );
    expect(withPage.status).toBe(400);
    expect(((await withPage.json()) as { error: { code: number } }).error.code).toBe(100);
  });

  it('resumes after a dropped transfer and still delivers the exact bytes', async () => {
    const { apiKey } = await connectPage('vito');
    api.sim?.sim.addFault({
      platform: 'facebook',
      kind: 'transient',
      remaining: 1,
      pathIncludes: '/upload:',
    });
    const marker = uniqueMarker('fbv-drop');
    const done = await publishVideo(apiKey, marker);
    expect(done.status).toBe('published');
    expect(simPosts(api, 'facebook', marker)[0]?.media).toMatchObject({
      video: { length: CLIP.length, sha256: sha(CLIP) },
    });
  });

  it('a Page connected before the user token was kept: video refused as rejected, naming the reconnect, not retried', async () => {
    const { apiKey, id } = await connectPage('vera');
    const row = await api.db.socialAccount.findUniqueOrThrow({ where: { id } });
    const { token } = openCredentials(row.credentialsEncrypted, api.env.encryptionKey, id);
    await api.db.socialAccount.update({
      where: { id },
      data: { credentialsEncrypted: sealCredentials({ token }, api.env.encryptionKey, id) },
    });
    const uploadsBefore = requests('/upload').length;
    const done = await publishVideo(apiKey, uniqueMarker('fbv-old'));
    expect(done.status).toBe('failed');
    const result = done.platform_results?.facebook;
    const error = result && !result.success ? result.error : '';
    expect(error).toMatch(/Reconnect the Page/);
    expect(requests('/upload').length).toBe(uploadsBefore);
    // Text keeps working for such a Page.
    const marker = uniqueMarker('fbv-text');
    const post = await createB(api, apiKey, { content: `text ${marker}`, platforms: ['facebook'] });
    await request(api.app).post(`/v1/posts/${post.id}/publish`).set(bearer(apiKey));
    expect((await settleB(api, apiKey, post.id, 20_000)).status).toBe('published');
  });
});
