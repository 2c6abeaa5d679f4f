import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { fakeMp4 } from '@sps/core';
import { pullMedia } from '../src/media-pull.sim.js';

// The fetch Instagram and Threads make of a container's media URL: what it records, and its bounds (a slow
// or oversized URL ends in a failed pull instead of holding the container).
describe('pullMedia', () => {
  const video = Buffer.from(fakeMp4(3, 200_000));
  let server: Server;
  let base = '';
  const open = new Set<import('node:http').ServerResponse>();

  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/clip.mp4') return void res.end(video);
      if (req.url === '/page.html') return void res.end('<html>not a video</html>');
      if (req.url === '/slow') {
        res.writeHead(200, { 'content-type': 'video/mp4' });
        res.write(video.subarray(0, 16));
        open.add(res); // never ends: the pull's timeout must end it
        return;
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const res of open) res.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  const limits = { timeoutMs: 300, maxBytes: 1_000_000 };

  it('records the size, sha256 and sniffed type of what it fetched', async () => {
    expect(await pullMedia(`${base}/clip.mp4`, 'video', limits)).toEqual({
      state: 'fetched',
      url: `${base}/clip.mp4`,
      bytes: video.length,
      sha256: createHash('sha256').update(video).digest('hex'),
      type: 'video/mp4',
    });
  });

  it.each([
    ['/missing.jpg', 'image', limits, 'http_status'],
    ['/page.html', 'video', limits, 'not_media'],
    ['/clip.mp4', 'image', limits, 'not_media'],
    // A timeout far off: on a loaded box 200 KB can take longer than 300 ms, and the byte bound is what is tested.
    ['/clip.mp4', 'video', { timeoutMs: 10_000, maxBytes: 100_000 }, 'too_large'],
    ['/slow', 'video', limits, 'timeout'],
  ] as const)('%s as %s: a failed pull (%#)', async (path, kind, bounds, reason) => {
    expect(await pullMedia(`${base}${path}`, kind, bounds)).toMatchObject({ state: 'failed', reason });
  });

  it('a host nothing answers on is unreachable, not a crash', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    expect(await pullMedia(`http://127.0.0.1:${port}/a.jpg`, 'image', limits)).toMatchObject({
      state: 'failed',
      reason: 'unreachable',
    });
  });
});
