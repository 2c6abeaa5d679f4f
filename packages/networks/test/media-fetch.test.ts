import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { isForbiddenAddress } from '@sps/core';
import sharp from 'sharp';
import { createMediaFetcher, type TFetchMedia } from '../src/media-fetch.js';

// The media server listens on 127.0.0.2. Tests that need "a reachable host" allow exactly that
// address and keep the real policy for every other one, so a hop to 127.0.0.1 is still refused.
const HOST = '127.0.0.2';
const onlyTestHost = (address: string) => address !== HOST && isForbiddenAddress(address);

let server: Server;
let base: string;
let port: number;
let png: Buffer;
let bigPng: Buffer;
const hits: string[] = [];
/** Bytes the server managed to write for a path before the client went away. */
const written: Record<string, number> = {};

const JPEG_HEAD = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1]);
const MP4 = Buffer.concat([
  Buffer.from([0, 0, 0, 0x18]),
  Buffer.from('ftypisom'),
  Buffer.from([0, 0, 2, 0]),
  Buffer.from('isomiso2'),
  Buffer.alloc(64),
]);

function stream(path: string, res: ServerResponse, chunk: Buffer, total: number, everyMs: number) {
  written[path] = 0;
  const timer = setInterval(() => {
    if (res.destroyed || written[path]! >= total) {
      clearInterval(timer);
      if (!res.destroyed) res.end();
      return;
    }
    res.write(chunk);
    written[path]! += chunk.length;
  }, everyMs);
  res.on('close', () => clearInterval(timer));
}

function handle(req: IncomingMessage, res: ServerResponse) {
  const path = req.url ?? '/';
  hits.push(path);
  const redirect = /^\/hop\/(\d+)$/.exec(path);
  if (redirect) {
    const left = Number(redirect[1]);
    res.writeHead(302, { location: left > 1 ? `/hop/${left - 1}` : '/ok.png' }).end();
    return;
  }
  switch (path) {
    case '/ok.png':
      res.writeHead(200, { 'content-type': 'image/png' }).end(png);
      return;
    case '/big.png':
      res.writeHead(200, { 'content-type': 'image/png' }).end(bigPng);
      return;
    case '/clip.mp4':
      res.writeHead(200, { 'content-type': 'video/mp4' }).end(MP4);
      return;
    case '/no-type':
      res.writeHead(200).end(png);
      return;
    case '/to-loopback':
      res.writeHead(302, { location: `http://127.0.0.1:${port}/ok.png` }).end();
      return;
    case '/to-localhost':
      res.writeHead(302, { location: `http://localhost:${port}/ok.png` }).end();
      return;
    case '/to-metadata':
      res.writeHead(301, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
      return;
    case '/announced-huge':
      // Announces more than any cap and never sends the body: only the header can end this quickly.
      res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': '900000000' });
      res.write(MP4);
      return;
    case '/endless.mp4':
      res.writeHead(200, { 'content-type': 'video/mp4' });
      res.write(MP4);
      stream(path, res, Buffer.alloc(64 * 1024), 50_000_000, 1);
      return;
    case '/html-as-jpeg':
      res
        .writeHead(200, { 'content-type': 'image/jpeg' })
        .end('<!doctype html><html><body>login</body></html>');
      return;
    case '/jpeg-as-html':
      res.writeHead(200, { 'content-type': 'text/html' }).end(png);
      return;
    case '/slow-body.jpg':
      res.writeHead(200, { 'content-type': 'image/jpeg' });
      res.write(JPEG_HEAD);
      stream(path, res, Buffer.alloc(1), 10_000, 50);
      return;
    case '/slow-headers':
      setTimeout(() => {
        if (!res.destroyed) res.writeHead(200, { 'content-type': 'image/png' }).end(png);
      }, 5_000);
      return;
    case '/missing':
      res.writeHead(404, { 'content-type': 'text/plain' }).end('internal path /srv/media/x not found');
      return;
    case '/busy':
      res.writeHead(503).end();
      return;
    default:
      res.writeHead(500).end();
  }
}

beforeAll(async () => {
  png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#336699' } })
    .png()
    .toBuffer();
  // Noise does not compress: a 1024x1024 RGB PNG of it is about 3 MB.
  const side = 1024;
  bigPng = await sharp(randomBytes(side * side * 3), { raw: { width: side, height: side, channels: 3 } })
    .png()
    .toBuffer();
  server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  port = (server.address() as AddressInfo).port;
  base = `http://${HOST}:${port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const image = (url: string, maxBytes = 5_000_000) => ({
  url,
  kind: 'image' as const,
  network: 'X',
  maxBytes,
});
const video = (url: string, maxBytes = 1_000_000) => ({
  url,
  kind: 'video' as const,
  network: 'X',
  maxBytes,
});

async function refusal(fetchMedia: TFetchMedia, request: Parameters<TFetchMedia>[0]) {
  const outcome = await fetchMedia(request);
  if (outcome.ok) throw new Error('expected a refusal');
  return outcome.failure;
}

describe('createMediaFetcher: downloads', () => {
  const fetchMedia = createMediaFetcher({ forbiddenAddress: onlyTestHost, timeoutMs: 3000 });

  it('returns the bytes and the type their magic numbers say', async () => {
    const outcome = await fetchMedia(image(`${base}/ok.png`));
    expect(outcome).toEqual({ ok: true, value: { bytes: png, type: 'image/png' } });
    const clip = await fetchMedia(video(`${base}/clip.mp4`));
    expect(clip.ok && clip.value.type).toBe('video/mp4');
  });

  it('accepts a body without Content-Type when its bytes are an image', async () => {
    const outcome = await fetchMedia(image(`${base}/no-type`));
    expect(outcome.ok && outcome.value.type).toBe('image/png');
  });

  it('follows up to 3 redirects and refuses a longer chain', async () => {
    expect((await fetchMedia(image(`${base}/hop/3`))).ok).toBe(true);
    hits.length = 0;
    const failure = await refusal(fetchMedia, image(`${base}/hop/4`));
    expect(failure.kind).toBe('rejected');
    expect(failure.message).toContain('redirects more than 3 times');
    expect(hits).not.toContain('/ok.png');
  });
});

describe('createMediaFetcher: address policy', () => {
  const strict = createMediaFetcher({ timeoutMs: 3000 });
  const testHostOnly = createMediaFetcher({ forbiddenAddress: onlyTestHost, timeoutMs: 3000 });

  it('refuses loopback by IP literal before connecting', async () => {
    hits.length = 0;
    const failure = await refusal(strict, image(`${base}/ok.png`));
    expect(failure.kind).toBe('rejected');
    expect(failure.message).toContain('is not a public internet address');
    expect(hits).toEqual([]);
  });

  it('refuses a host name that resolves to loopback, without naming the address', async () => {
    const failure = await refusal(strict, image(`http://localhost:${port}/ok.png`));
    expect(failure.kind).toBe('rejected');
    expect(failure.message).toContain('is not a public internet address');
    expect(failure.message).not.toMatch(/127\.0\.0\.1|::1/);
  });

  it('refuses private, metadata and IPv4-mapped literals and non-http schemes', async () => {
    for (const url of [
      'http://10.1.2.3/cat.png',
      'http://169.254.169.254/latest/meta-data/',
      `http://[::ffff:127.0.0.1]:${port}/ok.png`,
      'file:///etc/passwd',
      'ftp://example.com/cat.png',
    ]) {
      const failure = await refusal(strict, image(url));
      expect(failure.kind).toBe('rejected');
      expect(failure.message).not.toContain('did not finish in time');
    }
  });

  it('re-checks every redirect hop: to 127.0.0.1, to localhost, to the metadata address', async () => {
    for (const path of ['/to-loopback', '/to-localhost', '/to-metadata']) {
      hits.length = 0;
      const failure = await refusal(testHostOnly, image(`${base}${path}`));
      expect(failure.kind).toBe('rejected');
      expect(failure.message).toContain('is not a public internet address');
      expect(hits).toEqual([path]);
    }
  });

  it('shows the URL without user info or query (signed URLs carry tokens there)', async () => {
    const failure = await refusal(strict, image('http://user:secret@10.0.0.7/cat.png?X-Amz-Signature=abc'));
    expect(failure.message).toContain('http://10.0.0.7/cat.png');
    expect(failure.message).not.toMatch(/secret|Signature/);
  });

  it('allowPrivate: true (MEDIA_ALLOW_PRIVATE_URLS, tests only) lets loopback through', async () => {
    const relaxed = createMediaFetcher({ allowPrivate: true, timeoutMs: 3000 });
    expect((await relaxed(image(`http://127.0.0.1:${port}/ok.png`))).ok).toBe(false); // nothing listens there
    expect((await relaxed(image(`${base}/to-loopback`))).ok).toBe(false);
    expect((await relaxed(image(`${base}/ok.png`))).ok).toBe(true);
  });
});

describe('createMediaFetcher: size, type, time, errors', () => {
  const fetchMedia = createMediaFetcher({ forbiddenAddress: onlyTestHost, timeoutMs: 1000 });

  // The server below never finishes its body: only the header check can end the download with "larger"
  // instead of the time bound's "did not finish in time".
  it('refuses a body whose Content-Length announces more than the cap, without reading it', async () => {
    const failure = await refusal(fetchMedia, video(`${base}/announced-huge`, 1_000_000));
    expect(failure.kind).toBe('rejected');
    expect(failure.message).toContain('larger than X accepts for a video (1000000 bytes)');
  });

  it('aborts a body without Content-Length as soon as it passes the cap', async () => {
    const failure = await refusal(
      createMediaFetcher({ forbiddenAddress: onlyTestHost, videoTimeoutMs: 20_000 }),
      video(`${base}/endless.mp4`, 300_000),
    );
    expect(failure.kind).toBe('rejected');
    expect(failure.message).toContain('larger than X accepts for a video');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(written['/endless.mp4']).toBeLessThan(50_000_000);
  });

  it('refuses HTML served as image/jpeg, and an image served as text/html', async () => {
    const html = await refusal(fetchMedia, image(`${base}/html-as-jpeg`));
    expect(html.kind).toBe('rejected');
    expect(html.message).toContain('the file is not an image in a supported format');
    const mislabelled = await refusal(fetchMedia, image(`${base}/jpeg-as-html`));
    expect(mislabelled.message).toContain('the file is not an image (its server says it is text/html)');
  });

  it('refuses a video where an image was asked for, and the other way round', async () => {
    expect((await refusal(fetchMedia, image(`${base}/clip.mp4`))).message).toContain('not an image');
    expect((await refusal(fetchMedia, video(`${base}/ok.png`))).message).toContain('not a video');
  });

  // The trickling body would take 500 s; headers that never come would wait forever.
  it('bounds the whole download: a body that trickles past the bound is stopped (transient)', async () => {
    const failure = await refusal(fetchMedia, image(`${base}/slow-body.jpg`));
    expect(failure).toEqual({
      kind: 'transient',
      message: expect.stringContaining('the download did not finish in time'),
    });
    const headers = await refusal(fetchMedia, image(`${base}/slow-headers`));
    expect(headers.message).toContain('did not finish in time');
  });

  it('says the host answered an error without echoing its status or body', async () => {
    const missing = await refusal(fetchMedia, image(`${base}/missing`));
    expect(missing.kind).toBe('rejected');
    expect(missing.message).toContain('its host answered with an error');
    // The message names the URL, whose random port may itself contain "404" or "503": look past it.
    expect(missing.message.replaceAll(base, '')).not.toMatch(/404|srv\/media/);
    expect(missing.status).toBeUndefined();
    const busy = await refusal(fetchMedia, image(`${base}/busy`));
    expect(busy.kind).toBe('transient');
    expect(busy.message.replaceAll(base, '')).not.toContain('503');
  });
});

describe('createMediaFetcher: images over the network limit', () => {
  const fetchMedia = createMediaFetcher({ forbiddenAddress: onlyTestHost, timeoutMs: 20_000 });

  it("re-encodes a 3 MB PNG until it fits Bluesky's 1,000,000-byte blob", async () => {
    expect(bigPng.length).toBeGreaterThan(3_000_000);
    const outcome = await fetchMedia({
      url: `${base}/big.png`,
      kind: 'image',
      network: 'Bluesky',
      maxBytes: 1_000_000,
    });
    if (!outcome.ok) throw new Error(outcome.failure.message);
    expect(outcome.value.bytes.length).toBeLessThanOrEqual(1_000_000);
    expect(outcome.value.type).toBe('image/jpeg');
    expect(outcome.value.reencoded).toBe(true);
    const meta = await sharp(outcome.value.bytes).metadata();
    expect(meta.format).toBe('jpeg');
  });

  it('refuses an image that cannot be made to fit, with a clear reason', async () => {
    const failure = await refusal(fetchMedia, {
      url: `${base}/big.png`,
      kind: 'image',
      network: 'X',
      maxBytes: 2_000,
    });
    expect(failure.kind).toBe('rejected');
    expect(failure.message).toContain('the image cannot be made to fit the limit of 2000 bytes');
  });

  it('refuses an image over the source cap without re-encoding it', async () => {
    const capped = createMediaFetcher({ forbiddenAddress: onlyTestHost, sourceImageMaxBytes: 1_000_000 });
    const failure = await refusal(capped, {
      url: `${base}/big.png`,
      kind: 'image',
      network: 'X',
      maxBytes: 500_000,
    });
    expect(failure.message).toContain('larger than the 1000000 bytes downloaded for an image');
  });

  it('converts an image of a type the network does not take (accept) to JPEG', async () => {
    const outcome = await fetchMedia({ ...image(`${base}/ok.png`), accept: ['image/jpeg'] });
    expect(outcome.ok && outcome.value.type).toBe('image/jpeg');
  });
});

describe('createMediaFetcher: toFile (videos spooled to disk)', () => {
  const fetchMedia = createMediaFetcher({ forbiddenAddress: onlyTestHost, videoTimeoutMs: 20_000 });
  const toFile = fetchMedia.toFile;
  if (!toFile) throw new Error('the shared fetcher offers toFile');

  it('writes the exact bytes to a private temporary file that dispose removes', async () => {
    const outcome = await toFile({ ...video(`${base}/clip.mp4`), kind: 'video' });
    if (!outcome.ok) throw new Error(outcome.failure.message);
    const { path, size, type, dispose } = outcome.value;
    expect(type).toBe('video/mp4');
    expect(size).toBe(MP4.length);
    expect(readFileSync(path).equals(MP4)).toBe(true);
    expect(statSync(path).mode & 0o077).toBe(0);
    await dispose();
    expect(existsSync(path)).toBe(false);
  });

  it('stops past the cap, refuses other types and the policy as the in-memory fetch does, leaving no file', async () => {
    // A temporary directory of its own (os.tmpdir() reads TMPDIR), so other processes' files do not count.
    const saved = process.env.TMPDIR;
    const own = mkdtempSync(join(tmpdir(), 'fetch-test-'));
    process.env.TMPDIR = own;
    try {
      const large = await toFile({ ...video(`${base}/endless.mp4`, 300_000), kind: 'video' });
      expect(large.ok ? null : large.failure).toMatchObject({
        kind: 'rejected',
        message: expect.stringContaining('larger than X accepts for a video'),
      });
      const image = await toFile({ ...video(`${base}/ok.png`), kind: 'video' });
      expect(image.ok ? null : image.failure.kind).toBe('rejected');
      const type = await toFile({ ...video(`${base}/clip.mp4`), kind: 'video', accept: ['video/quicktime'] });
      expect(type.ok ? null : type.failure.message).toContain('a type X does not take');
      const loopback = await toFile({ ...video(`http://127.0.0.1:${port}/clip.mp4`), kind: 'video' });
      expect(loopback.ok ? null : loopback.failure.kind).toBe('rejected');
    } finally {
      process.env.TMPDIR = saved;
    }
    expect(readdirSync(own)).toEqual([]);
    rmSync(own, { recursive: true });
  });
});
