import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createFsStorage, createS3Storage, type TStorage } from '../src/index.js';
import { MIN_PART, planParts } from '../src/s3-compose.js';
import { startS3Server, type TS3Server } from './s3-server.js';

async function read(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const MB = 1024 * 1024;

describe('planParts (the parts of a server-side concatenation)', () => {
  const sizesOf = (parts: ReturnType<typeof planParts>) =>
    parts.map((part) =>
      'copy' in part
        ? { copy: part.copy.end - part.copy.start }
        : { gather: part.gather.reduce((sum, s) => sum + s.end - s.start, 0) },
    );

  it('copies large pieces as they are, the last one may be small', () => {
    const parts = planParts([
      { key: 'a', size: 8 * MB },
      { key: 'b', size: 8 * MB },
      { key: 'c', size: 3 },
    ]);
    expect(sizesOf(parts)).toEqual([{ copy: 8 * MB }, { copy: 8 * MB }, { gather: 3 }]);
  });

  it('gathers small pieces up to the minimum, borrowing the head of the next large one', () => {
    const parts = planParts([
      { key: 'a', size: MB },
      { key: 'b', size: MB },
      { key: 'c', size: 20 * MB },
      { key: 'd', size: 2 * MB },
      { key: 'e', size: 6 * MB },
    ]);
    expect(sizesOf(parts)).toEqual([{ gather: MIN_PART }, { copy: 17 * MB }, { gather: 8 * MB }]);
    expect(parts[0]).toEqual({
      gather: [
        { key: 'a', start: 0, end: MB },
        { key: 'b', start: 0, end: MB },
        { key: 'c', start: 0, end: 3 * MB },
      ],
    });
    expect(parts[1]).toEqual({ copy: { key: 'c', start: 3 * MB, end: 20 * MB } });
  });

  it('keeps every part but the last at least 5 MiB and the bytes in order, whatever the pieces', () => {
    const sizes = [1, 5 * MB - 1, 5 * MB, 7, 9 * MB, 4 * MB, 4 * MB, 1, 12 * MB, 3];
    const parts = planParts(sizes.map((size, i) => ({ key: String(i), size })));
    const slices = parts.flatMap((part) => ('copy' in part ? [part.copy] : part.gather));
    expect(slices.reduce((sum, s) => sum + s.end - s.start, 0)).toBe(sizes.reduce((a, b) => a + b, 0));
    let at = { key: 0, offset: 0 };
    for (const s of slices) {
      if (s.start === 0 && Number(s.key) !== at.key) at = { key: Number(s.key), offset: 0 };
      expect({ key: Number(s.key), start: s.start }).toEqual({ key: at.key, start: at.offset });
      at.offset = s.end;
    }
    for (const size of sizesOf(parts).slice(0, -1))
      expect(Object.values(size)[0]).toBeGreaterThanOrEqual(MIN_PART);
  });
});

describe('fs adopt', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sps-adopt-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('links the file into place: same inode, same bytes, the caller’s name still there', async () => {
    const storage = createFsStorage(join(dir, 'store'));
    const file = join(dir, 'staged');
    const bytes = randomBytes(100_000);
    await writeFile(file, bytes);
    const stored = await storage.adopt!('media/x/y', file);
    expect(stored.size).toBe(bytes.length);
    expect((await stat(storage.localPath!('media/x/y'))).ino).toBe((await stat(file)).ino);
    expect((await read(await storage.get('media/x/y'))).equals(bytes)).toBe(true);
    expect((await storage.stat('media/x/y'))?.etag).toBe(stored.etag);
  });
});

describe('S3 compose against s3rver (no UploadPartCopy)', () => {
  let s3: TS3Server;
  let storage: TStorage;
  beforeAll(async () => {
    s3 = await startS3Server();
    storage = createS3Storage({
      endpoint: s3.endpoint,
      region: 'us-east-1',
      bucket: s3.bucket,
      accessKeyId: 'S3RVER',
      secretAccessKey: 'S3RVER',
      forcePathStyle: true,
      prefix: `compose-${randomUUID()}/`,
    });
  });
  afterAll(async () => {
    await s3.stop();
  });

  it('copies one piece (CopyObject), gathers small ones, and answers null when a part copy is refused', async () => {
    const a = randomBytes(6 * MB);
    const b = randomBytes(30_000);
    await storage.put('p/a', Readable.from([a]));
    await storage.put('p/b', Readable.from([b]));
    const one = await storage.compose!('out/one', [{ key: 'p/a', size: a.length }]);
    expect(one?.size).toBe(a.length);
    expect((await read(await storage.get('out/one'))).equals(a)).toBe(true);
    const small = await storage.compose!('out/small', [
      { key: 'p/b', size: b.length },
      { key: 'p/b', size: b.length },
    ]);
    expect(small?.size).toBe(2 * b.length);
    expect((await read(await storage.get('out/small'))).equals(Buffer.concat([b, b]))).toBe(true);
    const sources = [
      { key: 'p/a', size: a.length },
      { key: 'p/b', size: b.length },
    ];
    expect(await storage.compose!('out/two', sources)).toBeNull();
    expect(await storage.stat('out/two')).toBeNull();
    // Remembered: several pieces are not tried again on this server.
    expect(await storage.compose!('out/three', sources)).toBeNull();
    expect(await storage.stat('out/three')).toBeNull();
  });
});
