import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { startNetworkSim, type TRunningSim } from '@sps/network-sim';
import type { TConnectorAccount, TMedia, TNetworkConnector, TPublishInput } from '../src/connector.js';
import { createYoutubeConnector } from '../src/youtube.connector.js';

const account: TConnectorAccount = {
  id: 'acc-yt',
  platform: 'youtube',
  accountName: 'SPS Channel',
  externalId: null,
  instanceUrl: null,
  token: 'yt-token',
};

let running: TRunningSim;
let connector: TNetworkConnector;
let video: TMedia;

function input(text: string, media: TMedia | null = video): TPublishInput {
  return { account, text, media, replyTo: null, root: null, idempotencyKey: `k-${text}` };
}

beforeAll(async () => {
  running = await startNetworkSim();
  connector = createYoutubeConnector({ baseUrl: running.baseUrls.youtube, timeoutMs: 2000 });
  video = { images: [], video: { url: `${running.baseUrls.youtube}/__media/video.mp4` } };
});
afterAll(() => running.close());
beforeEach(() => running.sim.reset());

describe('YouTube connector', () => {
  it('downloads the video and uploads it with the resumable protocol', async () => {
    const text = 'Launch day <live>\nEverything we shipped this week.';
    const outcome = await connector.publish(input(text));
    if (!outcome.ok) throw new Error(outcome.failure.message);
    const [init, upload] = running.sim.requests;
    expect(init?.method).toBe('POST');
    expect(init?.path).toBe('/youtube/upload/youtube/v3/videos?uploadType=resumable&part=snippet%2Cstatus');
    expect(init?.headers.authorization).toBe('Bearer yt-token');
    expect(init?.headers['x-upload-content-type']).toBe('video/mp4');
    expect(init?.body).toEqual({
      snippet: {
        title: 'Launch day ‹live›',
        description: 'Launch day ‹live›\nEverything we shipped this week.',
      },
      status: { privacyStatus: 'public', selfDeclaredMadeForKids: false },
    });
    expect(upload?.method).toBe('PUT');
    expect(upload?.path).toMatch(/upload_id=/);
    expect(upload?.headers['content-length']).toBe(init?.headers['x-upload-content-length']);
    expect(outcome.url).toBe(`https://www.youtube.com/watch?v=${outcome.remoteId}`);
    expect(running.sim.getPost('youtube', outcome.remoteId)?.media).toMatchObject({
      title: 'Launch day ‹live›',
      bytes: 24,
    });
  });

  it('cuts the title to 100 characters', async () => {
    const outcome = await connector.publish(input(`${'t'.repeat(150)}\nbody`));
    expect(outcome.ok).toBe(true);
    expect(running.sim.requests[0]?.body).toMatchObject({ snippet: { title: 't'.repeat(100) } });
  });

  it('rejects a post without a video before calling YouTube', async () => {
    for (const media of [null, { images: [{ url: 'https://cdn.example/a.jpg' }], video: null }]) {
      const outcome = await connector.publish(input('no video', media));
      expect(outcome.ok ? null : outcome.failure.kind).toBe('rejected');
    }
    expect(running.sim.requests).toHaveLength(0);
  });

  it('rejects a video URL that cannot be downloaded', async () => {
    const outcome = await connector.publish(
      input('gone', { images: [], video: { url: `${running.url}/missing.mp4` } }),
    );
    expect(outcome.ok ? null : outcome.failure).toMatchObject({ kind: 'rejected', status: 404 });
    expect(running.sim.requests).toHaveLength(0);
  });

  it('maps 401 to auth_expired', async () => {
    running.sim.addFault({ platform: 'youtube', kind: 'auth_expired', remaining: 1 });
    const outcome = await connector.publish(input('expired'));
    if (outcome.ok) throw new Error('expected failure');
    expect(outcome.failure).toMatchObject({ kind: 'auth_expired', status: 401 });
    expect(outcome.failure.message).toMatch(/Reconnect the YouTube account/);
  });

  it('maps 429 to rate_limited with the retry delay', async () => {
    running.sim.addFault({ platform: 'youtube', kind: 'rate_limited', remaining: 1, retryAfterSeconds: 7 });
    const limited = await connector.publish(input('busy'));
    expect(limited.ok ? null : limited.failure).toMatchObject({ kind: 'rate_limited', retryAfterMs: 7000 });
  });

  it('maps 5xx to transient and 400 to rejected', async () => {
    running.sim.addFault({
      platform: 'youtube',
      kind: 'server_error',
      remaining: 1,
      pathIncludes: 'upload_id',
    });
    const down = await connector.publish(input('down'));
    expect(down.ok ? null : down.failure).toMatchObject({ kind: 'transient', status: 503 });
    running.sim.addFault({ platform: 'youtube', kind: 'rejected', remaining: 1 });
    const bad = await connector.publish(input('bad'));
    expect(bad.ok ? null : bad.failure).toMatchObject({ kind: 'rejected', status: 400 });
  });

  it('reports an upload that never answers as transient with outcome unknown', async () => {
    const quick = createYoutubeConnector({ baseUrl: running.baseUrls.youtube, timeoutMs: 300 });
    running.sim.addFault({ platform: 'youtube', kind: 'hang_after_create', remaining: 1 });
    const outcome = await quick.publish(input('lost answer'));
    expect(outcome.ok ? null : outcome.failure).toMatchObject({ kind: 'transient', outcomeUnknown: true });
    expect(running.sim.postsOf('youtube')).toHaveLength(1);
  });

  it('deletes a video, and treats an already deleted one as done', async () => {
    const outcome = await connector.publish(input('short-lived'));
    if (!outcome.ok) throw new Error(outcome.failure.message);
    expect(await connector.delete?.(account, { remoteId: outcome.remoteId })).toEqual({ ok: true });
    const request = running.sim.requests.at(-1);
    expect(request?.method).toBe('DELETE');
    expect(request?.path).toBe(`/youtube/youtube/v3/videos?id=${outcome.remoteId}`);
    expect(running.sim.getPost('youtube', outcome.remoteId)?.deleted).toBe(true);
    expect(await connector.delete?.(account, { remoteId: outcome.remoteId })).toEqual({ ok: true });
  });

  it('reports a failed delete', async () => {
    running.sim.addFault({ platform: 'youtube', kind: 'auth_expired', remaining: 1 });
    const outcome = await connector.delete?.(account, { remoteId: 'abc' });
    expect(outcome?.ok ? null : outcome?.failure.kind).toBe('auth_expired');
  });
});
