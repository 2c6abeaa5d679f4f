import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { watchChunks } from './fs-storage.js';
import { composeObjects, notImplemented } from './s3-compose.js';
import { assertKey, StorageNotFoundError, type TStorage, type TStoredObject } from './storage.js';

export interface TS3StorageConfig {
  /** Custom endpoint of an S3-compatible store (`S3_ENDPOINT`); unset = AWS for the region. */
  endpoint?: string;
  region: string;
  bucket: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  /** Path-style addressing (`S3_FORCE_PATH_STYLE`), which most self-hosted S3 servers need. */
  forcePathStyle?: boolean;
  /** Multipart part size in bytes (at least 5 MiB, S3's minimum for all parts but the last). Default 8 MiB. */
  partSize?: number;
  /** Parts in flight at once; memory held by one upload is about partSize × queueSize. Default 2. */
  queueSize?: number;
  /** Prefix of every key inside the bucket (tests share one bucket). */
  prefix?: string;
}

function missing(error: unknown): boolean {
  if (error instanceof S3ServiceException) {
    return error.name === 'NoSuchKey' || error.name === 'NotFound' || error.$metadata.httpStatusCode === 404;
  }
  return false;
}

/**
 * Objects in an S3-compatible bucket. Writes are multipart uploads from the stream (`@aws-sdk/lib-storage`),
 * so at most `partSize × queueSize` bytes of an upload are in memory; a failed or refused write aborts the
 * multipart upload, leaving nothing. Reads are ranged GETs streamed through.
 */
export function createS3Storage(config: TS3StorageConfig): TStorage {
  const client = new S3Client({
    region: config.region,
    ...(config.endpoint ? { endpoint: config.endpoint } : {}),
    forcePathStyle: config.forcePathStyle ?? false,
    ...(config.accessKeyId && config.secretAccessKey
      ? { credentials: { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey } }
      : {}),
    // Checksums only where S3 requires them: many S3-compatible servers do not take the SDK's default
    // CRC32 trailers on every upload (aws-chunked encoding), and the bytes are checked by our own ETag use.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const bucket = config.bucket;
  const keyOf = (key: string) => {
    assertKey(key);
    return `${config.prefix ?? ''}${key}`;
  };
  /** Whether the server copies parts (UploadPartCopy); learnt from its first answer to one. */
  let copiesParts: boolean | undefined;
  return {
    kind: 's3',
    async compose(key, sources) {
      if (copiesParts === false && sources.length > 1) return null;
      try {
        await composeObjects(
          client,
          bucket,
          keyOf(key),
          sources.map((s) => ({ key: keyOf(s.key), size: s.size })),
        );
        if (sources.length > 1) copiesParts = true;
      } catch (error) {
        if (!notImplemented(error)) throw error;
        copiesParts = false;
        return null;
      }
      const stored = await this.stat(key);
      if (!stored) throw new StorageNotFoundError(key);
      return stored;
    },
    async put(key, body, options = {}) {
      const pass = new PassThrough();
      const feeding = pipeline(body, watchChunks(options.onChunk), pass);
      const upload = new Upload({
        client,
        params: { Bucket: bucket, Key: keyOf(key), Body: pass, ContentType: options.contentType },
        partSize: Math.max(config.partSize ?? 8 * 1024 * 1024, 5 * 1024 * 1024),
        queueSize: config.queueSize ?? 2,
        leavePartsOnError: false,
      });
      // A refused chunk fails the feeding pipeline: stop the upload so its parts are discarded.
      feeding.catch(() => {
        void upload.abort().catch(() => undefined);
      });
      const [fed, uploaded] = await Promise.allSettled([feeding, upload.done()]);
      if (fed.status === 'rejected') {
        await client
          .send(new DeleteObjectCommand({ Bucket: bucket, Key: keyOf(key) }))
          .catch(() => undefined);
        throw fed.reason;
      }
      if (uploaded.status === 'rejected') throw uploaded.reason;
      const stored = await this.stat(key);
      if (!stored) throw new StorageNotFoundError(key);
      return { ...stored, contentType: options.contentType ?? stored.contentType };
    },
    async get(key, range) {
      try {
        const answer = await client.send(
          new GetObjectCommand({
            Bucket: bucket,
            Key: keyOf(key),
            ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
          }),
        );
        return answer.Body as Readable;
      } catch (error) {
        if (missing(error)) throw new StorageNotFoundError(key);
        throw error;
      }
    },
    async stat(key): Promise<TStoredObject | null> {
      try {
        const head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: keyOf(key) }));
        return {
          key,
          size: head.ContentLength ?? 0,
          etag: head.ETag ?? `"${key}"`,
          contentType: head.ContentType,
        };
      } catch (error) {
        if (missing(error)) return null;
        throw error;
      }
    },
    async delete(key) {
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: keyOf(key) }));
    },
    async presign(key, expiresInSeconds) {
      return getSignedUrl(client, new GetObjectCommand({ Bucket: bucket, Key: keyOf(key) }), {
        expiresIn: expiresInSeconds,
      });
    },
  };
}
