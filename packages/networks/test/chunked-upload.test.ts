import { createHash, randomFillSync } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mp4DurationSeconds } from '@sps/core';
import { mp4MoovOf, openVideoFile, withVideoFile } from '../src/chunked-upload.js';
import { createMediaFetcher, type TFetchMedia } from '../src/media-fetch.js';
import { mp4, startMediaServer, type TMediaServer } from './media-server.js';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('chunked-upload: a video spooled to a temporary file, read in pieces', () => {
  let server: TMediaServer;
  const clip = mp4(7, 3_000_000);
  randomFillSync(clip, clip.indexOf('mdat') + 4);

  beforeAll(async () => {
    server = await startMediaServer();
    server.set('/clip.mp4', 'video/mp4', clip);
  });
  afterAll(() => server.close());

  const fetchMedia = createMediaFetcher({ allowPrivate: true });
  /** The fetcher, noting the path of every temporary file it hands out. */
  function tracked(): { fetcher: TFetchMedia; paths: string[] } {
    const paths: string[] = [];
    const toFile = fetchMedia.toFile;
    if (!toFile) throw new Error('the shared fetcher offers toFile');
    const fetcher: TFetchMedia = Object.assign((request: Parameters<TFetchMedia>[0]) => fetchMedia(request), {
      toFile: async (request: Parameters<NonNullable<TFetchMedia['toFile']>>[0]) => {
        const spooled = await toFile(request);
        if (spooled.ok) paths.push(spooled.value.path);
        return spooled;
      },
    });
    return { fetcher, paths };
  }
  const request = () => ({ url: server.url('/clip.mp4'), network: 'Test', maxBytes: 10_000_000 });

  it('reads pieces, ranges and streams that put the file back together, and finds the moov box', async () => {
    const opened = await openVideoFile(fetchMedia, request());
    if (!opened.ok) throw new Error(opened.failure.message);
    const file = opened.value;
    try {
      expect(file.size).toBe(clip.length);
      expect(file.type).toBe('video/mp4');
      const pieces: Buffer[] = [];
      for await (const piece of file.pieces(1_000_003)) pieces.push(piece.bytes);
      expect(pieces.map((p) => p.length)).toEqual([1_000_003, 1_000_003, 999_994]);
      expect(sha256(Buffer.concat(pieces))).toBe(sha256(clip));
      const streamed: Buffer[] = [];
      for await (const chunk of file.stream(10, 2_000_010)) streamed.push(chunk as Buffer);
      expect(Buffer.concat(streamed).equals(clip.subarray(10, 2_000_010))).toBe(true);
      const slice = await file.slice(5, 105);
      expect(Buffer.from(await slice.arrayBuffer()).equals(clip.subarray(5, 105))).toBe(true);
      const moov = await mp4MoovOf(file);
      expect(moov && mp4DurationSeconds(moov)).toBe(7);
    } finally {
      await file.dispose();
    }
  });

  it('removes the temporary file after the upload, when it fails and when it throws', async () => {
    const { fetcher, paths } = tracked();
    const done = await withVideoFile(fetcher, request(), async (file) => ({ ok: true, value: file.size }));
    expect(done).toEqual({ ok: true, value: clip.length });
    const failed = await withVideoFile(fetcher, request(), async () => ({
      ok: false,
      failure: { kind: 'transient', message: 'network down' },
    }));
    expect(failed.ok).toBe(false);
    await expect(
      withVideoFile(fetcher, request(), async (file) => {
        // A stream left open by a transfer cut short is closed before the file goes.
        file.stream();
        throw new Error('connection reset');
      }),
    ).rejects.toThrow('connection reset');
    expect(paths).toHaveLength(3);
    for (const path of paths) expect(existsSync(path)).toBe(false);
  });

  it('sends a media library video in a filesystem store from its own file: no copy, left in place', async () => {
    const store = await mkdtemp(join(tmpdir(), 'sps-store-'));
    try {
      const item = join(store, 'item.mp4');
      await writeFile(item, clip);
      await writeFile(join(store, 'note.txt'), 'not a video at all, just some text');
      const files: Record<string, string> = { 'https://sps.example/media/a.mp4': item };
      files['https://sps.example/media/b.mp4'] = join(store, 'note.txt');
      const ownFetcher = createMediaFetcher({
        ownMedia: {
          open: async () => {
            throw new Error('a local item is not streamed to a copy');
          },
          localFile: async (url) =>
            url in files
              ? { found: true, path: files[url] as string }
              : url.includes('/media/')
                ? { found: false }
                : null,
        },
      });
      const own = (url: string, maxBytes = 10_000_000) => ({ url, network: 'Test', maxBytes });
      const opened = await openVideoFile(ownFetcher, own('https://sps.example/media/a.mp4'));
      if (!opened.ok) throw new Error(opened.failure.message);
      const pieces: Buffer[] = [];
      for await (const piece of opened.value.pieces(1_000_000)) pieces.push(piece.bytes);
      expect(sha256(Buffer.concat(pieces))).toBe(sha256(clip));
      await opened.value.dispose();
      expect(existsSync(item)).toBe(true);
      // The same checks as a spooled copy: size, type, existence.
      const tooLarge = await openVideoFile(ownFetcher, own('https://sps.example/media/a.mp4', 1000));
      expect(tooLarge.ok ? null : tooLarge.failure).toMatchObject({
        kind: 'rejected',
        message: /larger than Test/,
      });
      const text = await openVideoFile(ownFetcher, own('https://sps.example/media/b.mp4'));
      expect(text.ok ? null : text.failure.kind).toBe('rejected');
      const gone = await openVideoFile(ownFetcher, own('https://sps.example/media/c.mp4'));
      expect(gone.ok ? null : gone.failure.message).toMatch(/no longer exists/);
    } finally {
      await rm(store, { recursive: true, force: true });
    }
  });
});
