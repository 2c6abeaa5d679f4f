import { createHash, randomBytes } from 'node:crypto';
import { request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fakeMp4 } from '@sps/core';
import type { Express } from 'express';
import sharp from 'sharp';
import request from 'supertest';
import { startS3Server } from '../../../packages/storage/test/s3-server.js';
import { createApi } from '../src/app.js';
import type { TApiEnv } from '../src/env.js';
import { createLogger } from '../src/logger.js';
import { bearer, startTestApi, type TTestApi } from './harness.js';
import { watchStep } from './setup-watch.js';

// Shared by the media and tus test files: storage set-ups, a second API instance, and tus 1.0 requests.

export const TUS = { 'Tus-Resumable': '1.0.0' };
export const MB = 1024 * 1024;

export const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
/** tus Upload-Metadata values are base64. */
export const b64 = (text: string) => Buffer.from(text).toString('base64');

/** A PNG of one colour: the same size and another `r` give other bytes of the same length. */
export const png = (width: number, height: number, r = 200) =>
  watchStep(
    `sharp png ${width}x${height}`,
    sharp({ create: { width, height, channels: 3, background: { r, g: 10, b: 10 } } })
      .png()
      .toBuffer(),
  );

/** An MP4 of `durationS` seconds padded with random bytes, large enough to be sent in several pieces. */
export const paddedMp4 = (durationS: number, paddingBytes: number) =>
  Buffer.concat([Buffer.from(fakeMp4(durationS, 64)), randomBytes(paddingBytes)]);

/**
 * A test API with MEDIA_STORAGE=s3 on a bucket of the local S3 API server; its close() stops that server
 * too (after the API, which may still be writing to it).
 */
export async function startS3TestApi(): Promise<TTestApi> {
  const s3 = await startS3Server();
  const api = await startTestApi({
    env: {
      MEDIA_STORAGE: 's3',
      S3_ENDPOINT: s3.endpoint,
      S3_BUCKET: s3.bucket,
      S3_REGION: 'us-east-1',
      S3_ACCESS_KEY_ID: 'S3RVER',
      S3_SECRET_ACCESS_KEY: 'S3RVER',
      S3_FORCE_PATH_STYLE: 'true',
    },
  });
  const closeApi = api.close;
  api.close = async () => {
    await closeApi();
    await s3.stop();
  };
  return api;
}

/** Another API app on the test API's PostgreSQL, Redis and media store, as a second instance behind a load balancer. */
export const secondInstance = (api: TTestApi, env: Partial<TApiEnv> = {}): Express =>
  createApi({
    env: { ...api.env, ...env },
    db: api.db,
    redis: api.redis,
    queues: api.queues,
    logger: createLogger('silent', 'api-test-b'),
  }).app;

export interface TListening {
  port: number;
  close(): Promise<void>;
}

/** Serves the app on a loopback port, for requests supertest cannot make (a stalled or cut body). */
export async function listenOnLoopback(app: Express): Promise<TListening> {
  const server: Server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Counts `bytes` against the account's quota, as one stored video would. */
export const keepBytes = (api: TTestApi, accountId: string, bytes: number) =>
  api.db.media.create({
    data: {
      accountId,
      storageKey: 'media/00/placeholder',
      type: 'video',
      mimeType: 'video/mp4',
      sizeBytes: BigInt(bytes),
      etag: '"x"',
    },
  });

/** tus creation: POST /v1/media/uploads declaring `length` bytes. */
export const tusCreate = (app: Express, key: string, length: number) =>
  request(app).post('/v1/media/uploads').set(bearer(key)).set(TUS).set('Upload-Length', String(length));

/** tus PATCH: `bytes` at `offset` of the upload at `path`. */
export const tusPatch = (app: Express, key: string, path: string, offset: number, bytes: Buffer) =>
  request(app)
    .patch(path)
    .set(bearer(key))
    .set(TUS)
    .set('Upload-Offset', String(offset))
    .set('Content-Type', 'application/offset+octet-stream')
    .send(bytes);

/** tus HEAD: the upload's status and the offset the server holds. */
export async function tusHead(app: Express, key: string, path: string) {
  const res = await request(app).head(path).set(bearer(key)).set(TUS);
  return { status: res.status, offset: Number(res.headers['upload-offset']) };
}

/** The upload's path (`/v1/media/uploads/<id>`) from a creation answer's Location. */
export const uploadPathOf = (res: request.Response) => new URL(res.headers.location as string).pathname;

/**
 * A PATCH over a real socket that declares the bytes from `offset` to the end of `length` but sends only
 * `sent`. It then stalls with the connection open and ends when the server answers or closes it, or, with
 * `drop`, cuts the connection as a failing network would.
 */
export function partialPatch(options: {
  port: number;
  key: string;
  path: string;
  offset: number;
  length: number;
  sent: Buffer;
  drop?: boolean;
}): Promise<void> {
  const { port, key, path, offset, length, sent, drop = false } = options;
  return new Promise<void>((resolve) => {
    const req = httpRequest({
      host: '127.0.0.1',
      port,
      path,
      method: 'PATCH',
      headers: {
        ...TUS,
        authorization: `Bearer ${key}`,
        'Upload-Offset': String(offset),
        'Content-Type': 'application/offset+octet-stream',
        'Content-Length': String(length - offset),
      },
    });
    if (!drop)
      req.on('response', (res) => {
        res.resume();
        res.on('end', resolve);
      });
    req.on('error', () => resolve());
    req.on('close', () => resolve());
    req.write(sent, () => {
      // Give the server the first part before the drop.
      if (drop) setImmediate(() => req.destroy());
    });
  });
}

/** Waits (up to 5 s) until some instance holds the upload's lock in Redis; answers the lock's value. */
export async function tusLockHeld(api: TTestApi, uploadId: string): Promise<string | null> {
  const lockKey = `${api.env.QUEUE_PREFIX}:tus:lock:${uploadId}`;
  for (let i = 0; i < 500 && (await api.redis.get(lockKey)) === null; i += 1) {
    await new Promise((r) => setTimeout(r, 10));
  }
  return api.redis.get(lockKey);
}
