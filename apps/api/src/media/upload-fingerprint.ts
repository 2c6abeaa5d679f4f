import { createHash } from 'node:crypto';
import { PassThrough, type Readable } from 'node:stream';
import { AppError, IDEMPOTENCY_HEADER, mediaLimitsOf, parseIdempotencyKey } from '@sps/core';
import type { Request, RequestHandler } from 'express';
import { authOf } from '../http/auth.js';
import type { TIdempotent } from '../http/idempotency.js';

/**
 * How much of a keyed multipart upload is read ahead to tell "the same body" from "another body" (contract,
 * Idempotent requests: another body under the same key is 422). Uploads up to this size are compared whole;
 * larger ones by their length and these first bytes (holding the whole file to hash it would mean keeping
 * gigabytes in memory before the key is even claimed).
 */
export const FINGERPRINT_PREFIX_BYTES = 4 * 1024 * 1024;

/** What a multipart body carries besides the file (as receiveUpload counts it). */
const ENVELOPE_BYTES = 64 * 1024;

const fingerprints = new WeakMap<Request, unknown>();
const bodies = new WeakMap<Request, Readable>();

/** The stream a keyed upload's multipart parser reads: what was read ahead, then the rest of the request. */
export function uploadBody(req: Request): Readable {
  return bodies.get(req) ?? req;
}

/** What the idempotency check compares for an upload (the Content-Length when nothing was read ahead). */
export function uploadFingerprint(req: Request): unknown {
  return fingerprints.get(req) ?? { size: req.headers['content-length'] ?? null };
}

function boundaryOf(req: Request): string | null {
  const match = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(req.headers['content-type'] ?? '');
  return match ? `--${match[1] ?? match[2]}` : null;
}

/**
 * The digest of a multipart body independent of its boundary (each client draws its own on every try, so a
 * retried upload differs from the first only there). For a cut body, a boundary may be cut at the end:
 * the last bytes that could be its start are left out.
 */
function digest(prefix: Buffer, boundary: string | null, whole: boolean): string {
  const hash = createHash('sha256');
  const text = prefix.toString('latin1');
  const parts = boundary ? text.split(boundary) : [text];
  if (!whole && boundary) {
    const last = parts.length - 1;
    parts[last] = parts[last]!.slice(0, Math.max(0, parts[last]!.length - (boundary.length - 1)));
  }
  for (const part of parts) hash.update(Buffer.from(part, 'latin1')).update('\0--\0');
  return hash.digest('hex');
}

/** Told apart from any key a client can send: keys are printable characters, this one has a line feed. */
const readAheadKey = (key: string) => `${key}\nupload-read-ahead`;

/**
 * Before the idempotency check of `POST /v1/media` and `/api/media`: with an `Idempotency-Key`, reads up to
 * FINGERPRINT_PREFIX_BYTES of the body, fingerprints it, and hands the parser a stream that replays those
 * bytes before the rest. Without the header it does nothing (the body streams as always).
 *
 * While it reads, the request holds a lease on a key of its own beside the client's, so a second request
 * with the same key is 409 `idempotency_key_in_use` then too (as it is once the first has claimed the key
 * itself). The lease is released before the key is claimed: a retry sent the moment the answer arrives
 * finds the answer stored, never the lease.
 */
export function readUploadAhead(idempotent: TIdempotent): RequestHandler {
  return async (req, _res, next) => {
    let key: string | null;
    try {
      key = parseIdempotencyKey(req.headersDistinct[IDEMPOTENCY_HEADER.toLowerCase()]);
    } catch {
      key = null; // The idempotency check answers the malformed header itself.
    }
    // A declared length past the plan's largest file is refused before any byte is read (receiveUpload):
    // reading ahead would only delay that 413 (or wait for bytes a client sends after it).
    const limits = mediaLimitsOf(authOf(req).plan);
    const declared = Number(req.headers['content-length']);
    const refusedAnyway = declared > Math.max(limits.imageBytes, limits.videoBytes) + ENVELOPE_BYTES;
    if (key === null || refusedAnyway) {
      next();
      return;
    }
    const lease = await idempotent.begin({
      accountId: authOf(req).accountId,
      key: readAheadKey(key),
      fingerprint: 'upload-read-ahead',
    });
    if (lease.kind !== 'run') throw new Error('a read-ahead lease is never answered');
    const outcome = await readAhead(req);
    await lease.release();
    if (outcome === 'aborted') {
      throw new AppError('validation_error', 'The upload was interrupted', {
        issues: [{ field: 'file', message: 'the upload was interrupted' }],
        fix: 'Retry the upload.',
      });
    }
    next();
  };
}

/** Reads the start of the body (all of it when small) and sets the fingerprint and the parser's stream. */
function readAhead(req: Request): Promise<'read' | 'aborted'> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let length = 0;
    let settled = false;
    const stop = () => {
      settled = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onAborted);
      req.off('aborted', onAborted);
      req.pause();
    };
    const finish = (whole: boolean) => {
      if (settled) return;
      stop();
      const prefix = Buffer.concat(chunks);
      // Chunks arrive in sizes of the network's choosing: a cut body is hashed up to the same byte each time.
      const hashed = whole ? prefix : prefix.subarray(0, FINGERPRINT_PREFIX_BYTES);
      const contentDigest = digest(hashed, boundaryOf(req), whole);
      // A whole body is compared by its content alone; a cut one also by its declared length.
      fingerprints.set(
        req,
        whole
          ? { digest: contentDigest }
          : { size: req.headers['content-length'] ?? null, digest: contentDigest },
      );
      const body = new PassThrough();
      body.write(prefix);
      if (whole) body.end();
      else req.pipe(body);
      bodies.set(req, body);
      resolve('read');
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      length += chunk.length;
      if (length >= FINGERPRINT_PREFIX_BYTES) finish(false);
    };
    const onEnd = () => finish(true);
    // The client went away while the start was read: nothing was claimed or stored yet.
    const onAborted = () => {
      if (settled) return;
      stop();
      resolve('aborted');
    };
    // A body already read (a JSON one, parsed before the route) has nothing left to read: the upload then
    // finds no file part and is refused.
    if (req.readableEnded) {
      finish(true);
      return;
    }
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onAborted);
    req.on('aborted', onAborted);
  });
}
