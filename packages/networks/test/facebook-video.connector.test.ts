import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { startNetworkSim, type TRunningSim } from '@sps/network-sim';
import type {
  TConnectorAccount,
  TNetworkConnector,
  TPublishInput,
  TPublishProgress,
} from '../src/connector.js';
import { createFacebookConnector } from '../src/facebook.connector.js';
import { createMediaFetcher, type TFetchMedia } from '../src/media-fetch.js';
import { mp4, startMediaServer, type TMediaServer } from './media-server.js';

// Page videos per Meta's current guide: the bytes go up with the Resumable Upload API (user token, the app
// id), then graph-video.facebook.com/{page}/videos publishes the handle with the Page token.
const APP_ID = '987654321';
const account: TConnectorAccount = {
  id: 'acc-fv',
  platform: 'facebook',
  accountName: 'SPS Page',
  externalId: '1122334455',
  instanceUrl: null,
  token: 'fb-page-token',
  extra: { userToken: 'fb-user-token' },
};
const VIDEO = mp4(3, 40_000);
const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

let running: TRunningSim;
let media: TMediaServer;
let connector: TNetworkConnector;

function input(extra: Partial<TPublishInput> = {}): TPublishInput {
  return {
    account,
    text: 'clip',
    media: { images: [], video: { url: media.url('/v.mp4') } },
    replyTo: null,
    root: null,
    idempotencyKey: 'k-clip',
    ...extra,
  };
}

function memoryProgress(
  saved: Record<string, string> | null = null,
): TPublishProgress & { states: unknown[] } {
  const states: unknown[] = [];
  const progress = {
    saved,
    states,
    async save(state: Record<string, string> | null) {
      states.push(state);
      progress.saved = state;
    },
  };
  return progress;
}

const paths = () => running.sim.requests.map((r) => `${r.method} ${r.path.split('?')[0]}`);

beforeAll(async () => {
  running = await startNetworkSim();
  media = await startMediaServer();
  media.set('/v.mp4', 'video/mp4', VIDEO);
  connector = createFacebookConnector({
    baseUrl: running.baseUrls.facebook,
    timeoutMs: 2000,
    appId: APP_ID,
    fetchMedia: createMediaFetcher({ allowPrivate: true }),
  });
});
afterAll(async () => {
  await media.close();
  await running.close();
});
beforeEach(() => running.sim.reset());

describe('Facebook video (Resumable Upload API, then graph-video)', () => {
  it('uploads the exact bytes with the user token and publishes the handle with the Page token', async () => {
    const progress = memoryProgress();
    const outcome = await connector.publish(input({ progress }));
    if (!outcome.ok) throw new Error(outcome.failure.message);
    const [start, transfer, publish] = running.sim.requests;
    expect(start?.path).toBe(
      `/facebook/v25.0/${APP_ID}/uploads?file_name=video.mp4&file_length=${VIDEO.length}&file_type=video%2Fmp4`,
    );
    expect(start?.headers.authorization).toBe('OAuth fb-user-token');
    expect(transfer?.path).toMatch(/^\/facebook\/v25\.0\/upload:/);
    expect(transfer?.headers.authorization).toBe('OAuth fb-user-token');
    expect(transfer?.headers.file_offset).toBe('0');
    expect(publish?.path).toBe('/facebook/v25.0/1122334455/videos');
    expect(publish?.headers.authorization).toBe('Bearer fb-page-token');
    expect(publish?.body).toEqual({ description: 'clip', fbuploader_video_file_chunk: expect.any(String) });
    expect(publish?.body).not.toHaveProperty('file_url');
    expect(running.sim.getPost('facebook', outcome.remoteId)?.media).toEqual({
      video: expect.objectContaining({ length: VIDEO.length, sha256: sha(VIDEO), fileType: 'video/mp4' }),
    });
    expect(outcome.url).toBe(`https://www.facebook.com/${outcome.remoteId}`);
    // The session, then the handle, were kept; a published video clears them.
    expect(progress.states.at(-1)).toBeNull();
    expect(progress.states[1]).toMatchObject({ handle: expect.any(String) });
  });

  it('sends the video from a temporary file (never the bytes in memory) and removes the file afterwards', async () => {
    const shared = createMediaFetcher({ allowPrivate: true });
    const spooled: string[] = [];
    let inMemory = 0;
    const spying: TFetchMedia = Object.assign(
      (request: Parameters<TFetchMedia>[0]) => {
        inMemory += 1;
        return shared(request);
      },
      {
        toFile: async (request: Parameters<NonNullable<TFetchMedia['toFile']>>[0]) => {
          const outcome = await (shared.toFile as NonNullable<TFetchMedia['toFile']>)(request);
          if (outcome.ok) spooled.push(outcome.value.path);
          return outcome;
        },
      },
    );
    const spy = createFacebookConnector({
      baseUrl: running.baseUrls.facebook,
      timeoutMs: 2000,
      appId: APP_ID,
      fetchMedia: spying,
    });
    running.sim.addFault({ platform: 'facebook', kind: 'transient', remaining: 1, pathIncludes: '/upload:' });
    const outcome = await spy.publish(input());
    if (!outcome.ok) throw new Error(outcome.failure.message);
    expect(inMemory).toBe(0);
    expect(spooled).toHaveLength(1);
    expect(existsSync(spooled[0] ?? '')).toBe(false);
    expect(running.sim.getPost('facebook', outcome.remoteId)?.media).toMatchObject({
      video: { length: VIDEO.length, sha256: sha(VIDEO) },
    });
  });

  it('resumes from the offset the session reports after a dropped transfer', async () => {
    running.sim.addFault({ platform: 'facebook', kind: 'transient', remaining: 1, pathIncludes: '/upload:' });
    const outcome = await connector.publish(input());
    if (!outcome.ok) throw new Error(outcome.failure.message);
    expect(paths()).toEqual([
      `POST /facebook/v25.0/${APP_ID}/uploads`,
      expect.stringMatching(/^POST \/facebook\/v25\.0\/upload:/),
      expect.stringMatching(/^GET \/facebook\/v25\.0\/upload:/),
      expect.stringMatching(/^POST \/facebook\/v25\.0\/upload:/),
      'POST /facebook/v25.0/1122334455/videos',
    ]);
    expect(running.sim.getPost('facebook', outcome.remoteId)?.media).toMatchObject({
      video: { length: VIDEO.length, sha256: sha(VIDEO) },
    });
  });

  it("goes on with an earlier attempt's session from the bytes it holds", async () => {
    const base = `${running.baseUrls.facebook}/v25.0`;
    const auth = { authorization: 'OAuth fb-user-token' };
    const started = (await (
      await fetch(
        `${base}/${APP_ID}/uploads?file_name=v.mp4&file_length=${VIDEO.length}&file_type=video/mp4`,
        {
          method: 'POST',
          headers: auth,
        },
      )
    ).json()) as { id: string };
    const half = 15_000;
    const partial = await fetch(`${base}/${started.id}`, {
      method: 'POST',
      headers: { ...auth, file_offset: '0', 'content-type': 'application/octet-stream' },
      body: VIDEO.subarray(0, half),
    });
    expect(partial.status).toBe(200);
    running.sim.requests.length = 0;
    const progress = memoryProgress({ fbSession: started.id, size: String(VIDEO.length) });
    const outcome = await connector.publish(input({ progress }));
    if (!outcome.ok) throw new Error(outcome.failure.message);
    const transfer = running.sim.requests.find((r) => r.method === 'POST' && r.path.includes('/upload:'));
    expect(transfer?.headers.file_offset).toBe(String(half));
    const sent = transfer?.body;
    expect(Buffer.isBuffer(sent) ? sent.length : -1).toBe(VIDEO.length - half);
    expect(running.sim.requests.some((r) => r.path.includes('/uploads'))).toBe(false);
    expect(running.sim.getPost('facebook', outcome.remoteId)?.media).toMatchObject({
      video: { length: VIDEO.length, sha256: sha(VIDEO) },
    });
  });

  it('asks the session where it stands when Meta says the offset is wrong (6001/1363037), then goes on', async () => {
    // A stand-in Graph whose first transfer answers Meta's lost-place error (as restfb/restfb#737 quotes it).
    const seen: string[] = [];
    let transfers = 0;
    const graph = createServer((req, res) => {
      seen.push(`${req.method} ${req.url?.split('?')[0]} ${String(req.headers.file_offset ?? '')}`);
      req.resume();
      req.on('end', () => {
        const json = (status: number, body: unknown) =>
          res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
        if (req.url?.includes('/uploads')) return json(200, { id: 'upload:s1' });
        if (req.method === 'GET') return json(200, { id: 'upload:s1', file_offset: 0 });
        if (req.url?.includes('upload:s1')) {
          transfers += 1;
          if (transfers === 1) {
            return json(400, {
              error: {
                message: 'There was a problem uploading your video. Please try again.',
                type: 'OAuthException',
                code: 6001,
                error_data: { start_offset: 0, end_offset: VIDEO.length },
                error_subcode: 1363037,
                is_transient: false,
              },
            });
          }
          return json(200, { h: 'handle-1' });
        }
        return json(200, { id: '55_66' });
      });
    });
    await new Promise<void>((resolve) => graph.listen(0, '127.0.0.1', resolve));
    try {
      const fake = createFacebookConnector({
        baseUrl: `http://127.0.0.1:${(graph.address() as AddressInfo).port}`,
        timeoutMs: 2000,
        appId: APP_ID,
        fetchMedia: createMediaFetcher({ allowPrivate: true }),
      });
      const outcome = await fake.publish(input());
      expect(outcome).toMatchObject({ ok: true, remoteId: '55_66' });
      expect(seen).toEqual([
        `POST /v25.0/${APP_ID}/uploads `,
        'POST /v25.0/upload:s1 0',
        'GET /v25.0/upload:s1 ',
        'POST /v25.0/upload:s1 0',
        'POST /v25.0/1122334455/videos ',
      ]);
    } finally {
      await new Promise((resolve) => graph.close(resolve));
    }
  });

  it('refuses, without a call, an account connected before the user token was kept: reconnect', async () => {
    const { extra: _none, ...old } = account;
    const fetched = media.hits('/v.mp4');
    const outcome = await connector.publish(input({ account: old }));
    expect(outcome.ok ? null : outcome.failure).toMatchObject({
      kind: 'rejected',
      message: expect.stringMatching(/Reconnect the Page/),
    });
    expect(running.sim.requests).toHaveLength(0);
    expect(media.hits('/v.mp4')).toBe(fetched);
  });

  it('refuses, without a call, a user token past the expiry stored at connect', async () => {
    const expired = {
      ...account,
      extra: { userToken: 'fb-user-token', userTokenExpiresAt: '2020-01-01T00:00:00.000Z' },
    };
    const outcome = await connector.publish(input({ account: expired }));
    expect(outcome.ok ? null : outcome.failure).toMatchObject({
      kind: 'rejected',
      message: expect.stringMatching(/expired on 2020-01-01.*Reconnect the Page SPS Page/),
    });
    expect(running.sim.requests).toHaveLength(0);
  });

  it('refuses as rejected when the operator set no app id', async () => {
    const noApp = createFacebookConnector({ baseUrl: running.baseUrls.facebook, timeoutMs: 2000 });
    const outcome = await noApp.publish(input());
    expect(outcome.ok ? null : outcome.failure).toMatchObject({
      kind: 'rejected',
      message: expect.stringContaining('OAUTH_FACEBOOK_CLIENT_ID'),
    });
    expect(running.sim.requests).toHaveLength(0);
  });

  it('publishes on the separately configured video host, uploads on the Graph host', async () => {
    const split = createFacebookConnector({
      baseUrl: running.baseUrls.facebook,
      videoBaseUrl: `${running.baseUrls.facebook}/video-host`,
      timeoutMs: 2000,
      appId: APP_ID,
      fetchMedia: createMediaFetcher({ allowPrivate: true }),
    });
    const outcome = await split.publish(input());
    // The simulator serves no `/video-host` prefix (an unknown version to it): the publish is refused there.
    expect(outcome.ok).toBe(false);
    expect(paths()).toEqual([
      `POST /facebook/v25.0/${APP_ID}/uploads`,
      expect.stringMatching(/^POST \/facebook\/v25\.0\/upload:/),
      'POST /facebook/video-host/v25.0/1122334455/videos',
    ]);
  });

  it('turns a refused user token into a reconnect, never retried', async () => {
    running.sim.addFault({
      platform: 'facebook',
      kind: 'auth_expired',
      remaining: 1,
      pathIncludes: '/uploads',
    });
    const outcome = await connector.publish(input());
    expect(outcome.ok ? null : outcome.failure).toMatchObject({
      kind: 'rejected',
      message: expect.stringMatching(/Reconnect the Facebook Page SPS Page/),
    });
  });
});
