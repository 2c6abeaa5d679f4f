import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { startNetworkSim, type TRunningSim } from '@sps/network-sim';
import type { TConnectorAccount, TPublishInput } from '../src/connector.js';
import { createMediaFetcher, SPOOL_FULL_RETRY_MS } from '../src/media-fetch.js';
import { createSpoolBudget, type TSpoolBudget } from '../src/spool-budget.js';
import { SPOOL_MAX_WAIT_MS, withSpoolWait } from '../src/spool-wait.js';
import { createYoutubeConnector } from '../src/youtube.connector.js';
import { mp4 } from './media-server.js';

const accountOf = (id: string): TConnectorAccount => ({
  id,
  platform: 'youtube',
  accountName: id,
  externalId: null,
  instanceUrl: null,
  token: 'yt-token',
});

let running: TRunningSim;
let videoUrl: string;
let videoBytes: number;

function input(account: TConnectorAccount, text: string): TPublishInput {
  return {
    account,
    text,
    media: { images: [], video: { url: videoUrl } },
    replyTo: null,
    root: null,
    idempotencyKey: `k-${text}`,
  };
}

/** Keeps what the connector saves, as the publisher does on the segment's row. */
function memoryProgress(saved: Record<string, string> | null = null) {
  const store = {
    saved,
    save: async (state: Record<string, string> | null) => {
      store.saved = state;
    },
  };
  return store;
}

const uploads = () => running.sim.requests.filter((r) => r.path.startsWith('/youtube/upload'));

async function holdFirst(fetchMedia: ReturnType<typeof createMediaFetcher>) {
  const first = await fetchMedia.toFile?.({
    url: videoUrl,
    kind: 'video',
    network: 'YouTube',
    maxBytes: 1e9,
    account: 'acc-first',
  });
  if (!first?.ok) throw new Error('the first video was not spooled');
  return first.value;
}

function setUp(maxBytes: number) {
  const budget: TSpoolBudget = createSpoolBudget({ maxBytes, setting: 'MEDIA_SPOOL_MAX' });
  const fetchMedia = createMediaFetcher({ allowPrivate: true, spoolBudget: budget });
  // As createConnectors wraps every connector.
  const connector = withSpoolWait(
    createYoutubeConnector({ baseUrl: running.baseUrls.youtube, timeoutMs: 2000, fetchMedia }),
  );
  return { budget, fetchMedia, connector };
}

beforeAll(async () => {
  running = await startNetworkSim();
  videoUrl = `${running.baseUrls.youtube}/__media/video.mp4`;
  const probe = await createMediaFetcher({ allowPrivate: true }).toFile?.({
    url: videoUrl,
    kind: 'video',
    network: 'YouTube',
    maxBytes: 1e9,
  });
  if (!probe?.ok) throw new Error('the simulator video could not be fetched');
  videoBytes = probe.value.size;
  await probe.value.dispose();
});
afterAll(() => running.close());
beforeEach(() => running.sim.reset());

describe('spool budget with a connector', () => {
  it('makes a second large video wait (pending, no attempt spent) while the first holds the budget, then go', async () => {
    // Room for one video, not two.
    const { budget, fetchMedia, connector } = setUp(Math.floor(videoBytes * 1.5));
    const first = await holdFirst(fetchMedia);
    expect(budget.held()).toBe(videoBytes);

    const progress = memoryProgress();
    const second = input(accountOf('acc-second'), 'second video');
    const waiting = await connector.publish({ ...second, progress });
    expect(waiting.ok).toBe(false);
    if (waiting.ok) return;
    expect(waiting.pending).toEqual({ checkAfterMs: SPOOL_FULL_RETRY_MS });
    expect(waiting.failure.kind).toBe('transient');
    expect(waiting.failure.message).toMatch(/MEDIA_SPOOL_MAX/);
    // The wait's start is saved, so the publisher does not take the segment for an unanswered send.
    expect(Object.keys(progress.saved ?? {})).toEqual(['spoolWaitSince']);
    // Nothing reached the network, and the refused download left nothing held.
    expect(uploads()).toHaveLength(0);
    expect(budget.held()).toBe(videoBytes);

    await first.dispose();
    expect(budget.held()).toBe(0);
    const sent = await connector.publish({ ...second, progress });
    if (!sent.ok) throw new Error(sent.failure.message);
    expect(uploads().length).toBeGreaterThan(0);
    expect(progress.saved?.spoolWaitSince).toBeUndefined();
    // The upload is over: its file and its place in the budget are gone.
    expect(budget.held()).toBe(0);
  });

  it('answers a plain transient failure to a caller without progress, or once the wait has lasted too long', async () => {
    const { fetchMedia, connector } = setUp(Math.floor(videoBytes * 1.5));
    const first = await holdFirst(fetchMedia);
    try {
      const direct = await connector.publish(input(accountOf('acc-second'), 'direct'));
      expect(direct.ok ? null : [direct.failure.kind, direct.failure.retryAfterMs, direct.pending]).toEqual([
        'transient',
        SPOOL_FULL_RETRY_MS,
        undefined,
      ]);
      const longAgo = String(Date.now() - SPOOL_MAX_WAIT_MS - 1000);
      const progress = memoryProgress({ spoolWaitSince: longAgo });
      const late = await connector.publish({ ...input(accountOf('acc-second'), 'late'), progress });
      expect(late.ok ? null : [late.failure.kind, late.pending]).toEqual(['transient', undefined]);
      expect(progress.saved).toBeNull();
    } finally {
      await first.dispose();
    }
  });

  it('refuses a video larger than the whole budget for good, naming the variable', async () => {
    const { budget, connector } = setUp(Math.floor(videoBytes / 2));
    const outcome = await connector.publish(input(accountOf('acc-one'), 'too large'));
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.failure.kind).toBe('rejected');
    expect(outcome.failure.message).toMatch(/MEDIA_SPOOL_MAX = \d+ bytes/);
    expect(budget.held()).toBe(0);
  });

  it('holds an unannounced size as it arrives and frees it when the download is stopped past the budget', async () => {
    const body = mp4(5, 64 * 1024);
    // Chunked, no Content-Length: the budget learns the size only from the bytes.
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'video/mp4' });
      for (let at = 0; at < body.length; at += 8192) res.write(body.subarray(at, at + 8192));
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v.mp4`;
    try {
      const { budget, fetchMedia } = setUp(body.length - 1);
      const request = { url, kind: 'video' as const, network: 'YouTube', maxBytes: 1e9, account: 'acc-a' };
      const stopped = await fetchMedia.toFile?.(request);
      expect(stopped?.ok).toBe(false);
      if (stopped?.ok !== false) return;
      expect(stopped.failure.kind).toBe('rejected');
      expect(stopped.failure.message).toMatch(/MEDIA_SPOOL_MAX/);
      expect(budget.held()).toBe(0);

      const roomy = setUp(body.length);
      const spooled = await roomy.fetchMedia.toFile?.(request);
      if (!spooled?.ok) throw new Error('the video was not spooled');
      expect(roomy.budget.held('acc-a')).toBe(body.length);
      await spooled.value.dispose();
      expect(roomy.budget.held()).toBe(0);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
