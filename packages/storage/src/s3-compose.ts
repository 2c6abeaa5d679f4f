import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  type S3Client,
  S3ServiceException,
  UploadPartCommand,
  UploadPartCopyCommand,
} from '@aws-sdk/client-s3';

/** S3's smallest part but the last (https://docs.aws.amazon.com/AmazonS3/latest/userguide/qfacts.html). */
export const MIN_PART = 5 * 1024 * 1024;
/** S3's largest part, and the largest object CopyObject copies. */
const MAX_COPY = 5 * 1024 * 1024 * 1024;

/** A byte range of one source object (`end` exclusive). */
interface TSlice {
  key: string;
  start: number;
  end: number;
}

/** One part of the composed object: copied inside the store, or small slices gathered and sent. */
type TPart = { copy: TSlice } | { gather: TSlice[] };

const lengthOf = (slices: TSlice[]) => slices.reduce((sum, s) => sum + s.end - s.start, 0);

/**
 * The parts of the concatenation of `sources`: each source of at least MIN_PART is copied in place (split
 * under MAX_COPY); runs of smaller ones are gathered (downloaded and sent: under 3 × MIN_PART held) until
 * they reach MIN_PART, borrowing the head of the next large source when they cannot otherwise. Every part
 * but the last is at least MIN_PART, as S3 requires.
 */
export function planParts(sources: Array<{ key: string; size: number }>): TPart[] {
  const parts: TPart[] = [];
  let gathered: TSlice[] = [];
  const flush = () => {
    if (gathered.length > 0) parts.push({ gather: gathered });
    gathered = [];
  };
  for (const { key, size } of sources) {
    let start = 0;
    if (gathered.length > 0 && size >= MIN_PART) {
      // Small pieces before a large one: fill their part from the large one's head.
      const need = Math.max(0, MIN_PART - lengthOf(gathered));
      const take = size - need >= MIN_PART ? need : size;
      gathered.push({ key, start: 0, end: take });
      start = take;
      flush();
    }
    const left = size - start;
    if (left >= MIN_PART) {
      const count = Math.ceil(left / MAX_COPY);
      const step = Math.ceil(left / count);
      for (let at = start; at < size; at += step)
        parts.push({ copy: { key, start: at, end: Math.min(size, at + step) } });
    } else if (left > 0) {
      gathered.push({ key, start, end: size });
      if (lengthOf(gathered) >= MIN_PART) flush();
    }
  }
  flush();
  return parts;
}

/** The server does not implement UploadPartCopy (s3rver answers 501 NotImplemented). */
export function notImplemented(error: unknown): boolean {
  return (
    error instanceof S3ServiceException &&
    (error.name === 'NotImplemented' || error.$metadata.httpStatusCode === 501)
  );
}

/**
 * Writes the concatenation of `sources` under `target` with a multipart upload whose parts are copied inside
 * the store (UploadPartCopy). A single source is one CopyObject. The multipart upload is aborted on failure.
 */
export async function composeObjects(
  client: S3Client,
  bucket: string,
  target: string,
  sources: Array<{ key: string; size: number }>,
): Promise<void> {
  const source = (key: string) => `${bucket}/${encodeURIComponent(key).replaceAll('%2F', '/')}`;
  if (sources.length === 1 && sources[0]!.size <= MAX_COPY) {
    await client.send(
      new CopyObjectCommand({ Bucket: bucket, Key: target, CopySource: source(sources[0]!.key) }),
    );
    return;
  }
  const created = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: target }));
  const UploadId = created.UploadId!;
  try {
    const done: Array<{ PartNumber: number; ETag: string }> = [];
    for (const [index, part] of planParts(sources).entries()) {
      const PartNumber = index + 1;
      if ('copy' in part) {
        const { key, start, end } = part.copy;
        const answer = await client.send(
          new UploadPartCopyCommand({
            Bucket: bucket,
            Key: target,
            UploadId,
            PartNumber,
            CopySource: source(key),
            CopySourceRange: `bytes=${start}-${end - 1}`,
          }),
        );
        done.push({ PartNumber, ETag: answer.CopyPartResult!.ETag! });
      } else {
        const chunks: Buffer[] = [];
        for (const { key, start, end } of part.gather) {
          const got = await client.send(
            new GetObjectCommand({ Bucket: bucket, Key: key, Range: `bytes=${start}-${end - 1}` }),
          );
          chunks.push(Buffer.from(await got.Body!.transformToByteArray()));
        }
        const answer = await client.send(
          new UploadPartCommand({
            Bucket: bucket,
            Key: target,
            UploadId,
            PartNumber,
            Body: Buffer.concat(chunks),
          }),
        );
        done.push({ PartNumber, ETag: answer.ETag! });
      }
    }
    await client.send(
      new CompleteMultipartUploadCommand({
        Bucket: bucket,
        Key: target,
        UploadId,
        MultipartUpload: { Parts: done },
      }),
    );
  } catch (error) {
    await client
      .send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: target, UploadId }))
      .catch(() => undefined);
    throw error;
  }
}
