import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach } from '@jest/globals';
import { fakeMp4 } from '@sps/core';
import { startNetworkSim, type TRunningSim } from '@sps/network-sim';

/** A loopback media host for connector tests: each path answers its bytes with its type. */
export interface TMediaServer {
  url(path: string): string;
  set(path: string, type: string, body: Uint8Array): void;
  hits(path: string): number;
  close(): Promise<void>;
}

/** A tiny valid PNG (1×1), JPEG-like and MP4 bodies the media fetcher's sniffing accepts. */
export const PNG_1X1 = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a0b3a5a50000000049454e44ae426082',
  'hex',
);
export const JPEG_BYTES = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(60, 1)]);
export const mp4 = (seconds: number, bytes = 64) => Buffer.from(fakeMp4(seconds, bytes));

export async function startMediaServer(): Promise<TMediaServer> {
  const files = new Map<string, { type: string; body: Uint8Array }>();
  const counts = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    counts.set(path, (counts.get(path) ?? 0) + 1);
    const file = files.get(path);
    if (!file) {
      res.writeHead(404).end();
      return;
    }
    res
      .writeHead(200, { 'content-type': file.type, 'content-length': String(file.body.length) })
      .end(file.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: (path) => `${base}${path}`,
    set: (path, type, body) => files.set(path, { type, body }),
    hits: (path) => counts.get(path) ?? 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface TSimAndMedia {
  running: TRunningSim;
  media: TMediaServer;
}

/**
 * The simulator and a media server serving `files` (path → [content type, body]) for one connector test
 * file: started before its tests, the simulator reset before each, both closed after. The file's own
 * beforeAll (registered after this call) makes its connector on `running.baseUrls`.
 */
export function useSimAndMedia(files: Record<string, [type: string, body: Uint8Array]> = {}): TSimAndMedia {
  const env = {} as TSimAndMedia;
  beforeAll(async () => {
    env.running = await startNetworkSim();
    env.media = await startMediaServer();
    for (const [path, [type, body]] of Object.entries(files)) env.media.set(path, type, body);
  });
  afterAll(async () => {
    await env.media.close();
    await env.running.close();
  });
  beforeEach(() => env.running.sim.reset());
  return env;
}
