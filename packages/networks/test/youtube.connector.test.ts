import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import {
  startNetworkSim,
  type TRunningSim,
  YOUTUBE_SIM_QUOTA_TOKEN,
  YOUTUBE_SIM_UPLOAD_LIMIT_TOKEN,
} from '@sps/network-sim';
import type {
  TConnectorAccount,
  TConnectorOptions,
  TMedia,
  TNetworkConnector,
  TPublishInput,
} from '../src/connector.js';
import { createMediaFetcher } from '../src/media-fetch.js';
import { createYoutubeConnector } from '../src/youtube.connector.js';
import { msUntilPacificMidnight } from '../src/youtube-quota.js';

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

function input(
  text: string,
  media: TMedia | null = video,
  extra: Partial<TPublishInput> = {},
): TPublishInput {
  return { account, text, media, replyTo: null, root: null, idempotencyKey: `k-${text}`, ...extra };
}

function make(extra: TConnectorOptions = {}) {
  return createYoutubeConnector({
    baseUrl: running.baseUrls.youtube,
    timeoutMs: 2000,
    fetchMedia: createMediaFetcher({ allowPrivate: true }),
    ...extra,
  });
}

/** Keeps what the connector saves, as the publisher does on the segment's row. */
function memoryProgress() {
  const store = {
    saved: null as Record<string, string> | null,
    save: async (state: Record<string, string> | null) => {
      store.saved = state;
    },
  };
  return store;
}

beforeAll(async () => {
  running = await startNetworkSim();
  connector = make();
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
      bytes: 1024,
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
    expect(outcome.ok ? null : outcome.failure).toMatchObject({ kind: 'rejected' });
    expect(outcome.ok ? '' : outcome.failure.message).not.toContain('404');
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
      // The session start; an interrupted upload itself is resumed (below).
      pathIncludes: 'snippet%2Cstatus',
    });
    const down = await connector.publish(input('down'));
    expect(down.ok ? null : down.failure).toMatchObject({ kind: 'transient', status: 503 });
    running.sim.addFault({ platform: 'youtube', kind: 'rejected', remaining: 1 });
    const bad = await connector.publish(input('bad'));
    expect(bad.ok ? null : bad.failure).toMatchObject({ kind: 'rejected', status: 400 });
  });

  it('resumes an interrupted upload from the offset the session reports, creating one video', async () => {
    const progress = memoryProgress();
    running.sim.addFault({
      platform: 'youtube',
      kind: 'hang_after_create',
      remaining: 1,
      pathIncludes: 'upload_id',
    });
    const outcome = await make({ timeoutMs: 300 }).publish(input('cut off', video, { progress }));
    if (!outcome.ok) throw new Error(outcome.failure.message);
    const puts = running.sim.requests.filter((r) => r.method === 'PUT');
    // The whole file (one chunk, with its range), then the status query, then the second half from byte 512.
    expect(puts.map((r) => r.headers['content-range'])).toEqual([
      'bytes 0-1023/1024',
      'bytes */1024',
      'bytes 512-1023/1024',
    ]);
    expect(running.sim.postsOf('youtube')).toHaveLength(1);
    expect(progress.saved?.session).toContain('upload_id=');
  });

  it('finds an upload whose answer was lost already complete and reports it without a second video', async () => {
    const progress = memoryProgress();
    // The session's final answer is lost (the video exists): the query answers it.
    running.sim.addFault({
      platform: 'youtube',
      kind: 'hang_after_create',
      remaining: 1,
      pathIncludes: 'uploadType=resumable&part',
    });
    const outcome = await make({ timeoutMs: 300 }).publish(input('answer lost', video, { progress }));
    if (!outcome.ok) throw new Error(outcome.failure.message);
    expect(running.sim.postsOf('youtube').map((p) => p.remoteId)).toEqual([outcome.remoteId]);
  });

  it('keeps the session for the next attempt when the session cannot be asked, and that attempt resumes it', async () => {
    const progress = memoryProgress();
    running.sim.addFault({
      platform: 'youtube',
      kind: 'server_error',
      remaining: 5,
      pathIncludes: 'upload_id',
    });
    const first = await connector.publish(input('retry later', video, { progress }));
    expect(first.ok ? null : first.failure).toMatchObject({ kind: 'transient' });
    expect(first.ok ? null : first.failure.outcomeUnknown).toBeUndefined();
    const session = progress.saved?.session;
    expect(session).toBeDefined();
    running.sim.clearFaults();
    running.sim.requests.length = 0;
    const second = await connector.publish(input('retry later', video, { progress }));
    if (!second.ok) throw new Error(second.failure.message);
    // No new session: the saved one is asked, then the bytes go to it.
    expect(running.sim.requests.filter((r) => r.method === 'POST')).toHaveLength(0);
    const puts = running.sim.requests.filter((r) => r.method === 'PUT');
    expect(puts.every((r) => r.path.includes('upload_id'))).toBe(true);
    expect(running.sim.postsOf('youtube')).toHaveLength(1);
  });

  it('opens a new session when the post was edited since the saved one, and forgets a session whose upload was refused', async () => {
    const progress = memoryProgress();
    running.sim.addFault({
      platform: 'youtube',
      kind: 'server_error',
      remaining: 2,
      pathIncludes: 'upload_id',
    });
    const first = await connector.publish(input('before edit', video, { progress }));
    expect(first.ok ? null : first.failure.kind).toBe('transient');
    const old = progress.saved?.session;
    const edited = await connector.publish(input('after edit', video, { progress }));
    if (!edited.ok) throw new Error(edited.failure.message);
    expect(progress.saved?.session).not.toBe(old);
    expect(running.sim.getPost('youtube', edited.remoteId)?.text).toBe('after edit');

    running.sim.addFault({ platform: 'youtube', kind: 'rejected', remaining: 1, pathIncludes: 'upload_id' });
    const refused = await connector.publish(input('refused upload', video, { progress }));
    expect(refused.ok ? null : refused.failure.kind).toBe('rejected');
    expect(progress.saved).toBeNull();
  });

  it('retries a used-up daily quota after midnight Pacific Time, and an upload limit after a day', async () => {
    const quota = await connector.publish({
      ...input('quota'),
      account: { ...account, token: YOUTUBE_SIM_QUOTA_TOKEN },
    });
    if (quota.ok) throw new Error('expected failure');
    expect(quota.failure).toMatchObject({ kind: 'rate_limited', status: 403 });
    const reset = msUntilPacificMidnight();
    expect(quota.failure.retryAfterMs).toBeGreaterThan(reset);
    expect(quota.failure.retryAfterMs).toBeLessThan(reset + 5 * 60_000);
    const limit = await connector.publish({
      ...input('limit'),
      account: { ...account, token: YOUTUBE_SIM_UPLOAD_LIMIT_TOKEN },
    });
    expect(limit.ok ? null : limit.failure).toMatchObject({
      kind: 'rate_limited',
      status: 400,
      retryAfterMs: 86_400_000,
    });
  });

  it('refuses a description over 5000 bytes before calling YouTube (bytes, not characters)', async () => {
    const outcome = await connector.publish(input('é'.repeat(2501)));
    expect(outcome.ok ? null : outcome.failure.kind).toBe('rejected');
    expect(outcome.ok ? '' : outcome.failure.message).toContain('5002');
    expect(running.sim.requests).toHaveLength(0);
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

describe('msUntilPacificMidnight', () => {
  it('counts to midnight in Los Angeles, on ordinary and DST days', () => {
    // 04:00 PST → 20 h.
    expect(msUntilPacificMidnight(Date.parse('2026-11-24T12:00:00Z'))).toBe(20 * 3_600_000);
    // 01:00 PST on the spring-forward day (23 h long) → midnight PDT is 07:00Z next day, 22 h on.
    expect(msUntilPacificMidnight(Date.parse('2026-03-08T09:00:00Z'))).toBe(22 * 3_600_000);
    // 00:30 PDT on the fall-back day (25 h long) → midnight PST is 08:00Z next day, 24.5 h on.
    expect(msUntilPacificMidnight(Date.parse('2026-11-01T07:30:00Z'))).toBe(24.5 * 3_600_000);
  });
});
