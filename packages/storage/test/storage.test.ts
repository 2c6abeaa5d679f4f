import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createFsStorage, createS3Storage, StorageNotFoundError, type TStorage } from '../src/index.js';
import { startS3Server, type TS3Server } from './s3-server.js';

async function read(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A stream of `size` bytes in 64 KiB chunks, made as it is read (never one buffer of the whole). */
function generated(size: number, seed: Buffer): Readable {
  let sent = 0;
  return new Readable({
    read() {
      if (sent >= size) {
        this.push(null);
        return;
      }
      const n = Math.min(65_536, size - sent);
      const chunk = Buffer.alloc(n);
      for (let i = 0; i < n; i += seed.length) seed.copy(chunk, i, 0, Math.min(seed.length, n - i));
      sent += n;
      this.push(chunk);
    },
  });
}

function behavesAsStorage(name: string, make: () => TStorage) {
  describe(name, () => {
    const key = () => `t/${randomUUID()}`;

    it('puts from a stream and gets the same bytes, whole and by range', async () => {
      const storage = make();
      const bytes = randomBytes(300_000);
      const k = key();
      const stored = await storage.put(k, Readable.from([bytes.subarray(0, 1000), bytes.subarray(1000)]), {
        contentType: 'image/png',
      });
      expect(stored.size).toBe(bytes.length);
      expect(stored.etag).toMatch(/^".+"$/);
      expect((await read(await storage.get(k))).equals(bytes)).toBe(true);
      const part = await read(await storage.get(k, { start: 1000, end: 1999 }));
      expect(part.equals(bytes.subarray(1000, 2000))).toBe(true);
      const stat = await storage.stat(k);
      expect(stat?.size).toBe(bytes.length);
      expect(stat?.etag).toBe(stored.etag);
    });

    it('answers missing objects as missing, and delete is idempotent', async () => {
      const storage = make();
      const k = key();
      expect(await storage.stat(k)).toBeNull();
      await expect(storage.get(k)).rejects.toBeInstanceOf(StorageNotFoundError);
      await storage.put(k, Readable.from([Buffer.from('x')]));
      await storage.delete(k);
      await storage.delete(k);
      expect(await storage.stat(k)).toBeNull();
    });

    it('leaves nothing behind when onChunk refuses the stream part-way', async () => {
      const storage = make();
      const k = key();
      await expect(
        storage.put(k, generated(12 * 1024 * 1024, randomBytes(1024)), {
          onChunk: (_chunk, total) => {
            if (total > 6 * 1024 * 1024) throw new Error('too large');
          },
        }),
      ).rejects.toThrow('too large');
      expect(await storage.stat(k)).toBeNull();
    });

    it('refuses keys that climb out of the root', async () => {
      const storage = make();
      for (const bad of ['../x', 'a/../../x', '/etc/passwd', '.hidden', 'a//b', '']) {
        await expect(storage.stat(bad)).rejects.toThrow('Invalid storage key');
      }
    });
  });
}

describe('storage', () => {
  let dir: string;
  let s3: TS3Server;
  const prefix = `run-${randomUUID()}/`;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sps-storage-'));
    s3 = await startS3Server();
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
    await s3.stop();
  });

  behavesAsStorage('filesystem', () => createFsStorage(dir));
  behavesAsStorage('S3 (local S3 API server)', () =>
    createS3Storage({
      endpoint: s3.endpoint,
      region: 'us-east-1',
      bucket: s3.bucket,
      accessKeyId: 'S3RVER',
      secretAccessKey: 'S3RVER',
      forcePathStyle: true,
      partSize: 5 * 1024 * 1024,
      prefix,
    }),
  );

  it('filesystem: a refused write leaves no temporary file', async () => {
    const storage = createFsStorage(dir);
    await expect(
      storage.put('tmpcheck/a', generated(200_000, Buffer.from('ab')), {
        onChunk: (_c, total) => {
          if (total > 100_000) throw new Error('stop');
        },
      }),
    ).rejects.toThrow('stop');
    expect(await readdir(join(dir, 'tmpcheck'))).toEqual([]);
  });

  it('S3: a large object goes up as a multipart upload and reads back byte for byte', async () => {
    const storage = createS3Storage({
      endpoint: s3.endpoint,
      region: 'us-east-1',
      bucket: s3.bucket,
      accessKeyId: 'S3RVER',
      secretAccessKey: 'S3RVER',
      forcePathStyle: true,
      partSize: 5 * 1024 * 1024,
      prefix,
    });
    const seed = randomBytes(4096);
    const size = 11 * 1024 * 1024 + 17;
    const stored = await storage.put('big/video', generated(size, seed));
    expect(stored.size).toBe(size);
    const tail = await read(await storage.get('big/video', { start: size - 5000, end: size - 1 }));
    const expected = await read(generated(size, seed));
    expect(tail.equals(expected.subarray(size - 5000))).toBe(true);
    const url = await storage.presign('big/video', 60);
    const fetched = await fetch(url!, { headers: { range: 'bytes=0-9' } });
    expect(fetched.status).toBe(206);
    expect(Buffer.from(await fetched.arrayBuffer()).equals(expected.subarray(0, 10))).toBe(true);
  });
});
