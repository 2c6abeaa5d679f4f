import { AppError, MAX_ALT_TEXT } from '@sps/core';
import busboy from 'busboy';
import type { Request, Response } from 'express';
import { type TMediaService, type TStoredUpload, tooLarge } from './media-service.js';
import { uploadBody } from './upload-fingerprint.js';

/** What a multipart body may carry besides the file (boundaries, part headers, alt text). */
const ENVELOPE_BYTES = 64 * 1024;

/** Bytes of a refused upload's rest still read (and dropped) so the client sees the answer, not a reset. */
const DRAIN_LIMIT = 16 * 1024 * 1024;

function fileIssue(message: string, fix: string): AppError {
  return new AppError('validation_error', `The upload has no usable file: ${message}`, {
    issues: [{ field: 'file', message }],
    fix,
  });
}

const FIX = 'Send multipart/form-data with the media in one part named "file" (and optionally "alt_text").';

/**
 * Reads a `multipart/form-data` upload with busboy: the part named `file` streams straight into the media
 * store (never buffered whole), `alt_text` (or `altText`) is taken as a field. Any other file part, a second
 * file or a body that is not multipart is a 400 naming `file`.
 */
export async function receiveUpload(
  req: Request,
  res: Response,
  service: TMediaService,
  account: { accountId: string; plan: string },
  altTextField: 'alt_text' | 'altText',
): Promise<{ upload: TStoredUpload; altText: string | null }> {
  // A declared length already over the largest file this plan takes, or over the quota left, is refused
  // before a byte is read (the stream checks would only say so after reading gigabytes).
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared)) {
    const limits = await service.allowance(account.accountId, account.plan);
    const cap = Math.max(limits.imageBytes, limits.videoBytes);
    const refusal =
      declared - ENVELOPE_BYTES > cap
        ? tooLarge(
            `The file is larger than the ${Math.round(cap / 1048576)} MB this plan allows for one file`,
            {
              limit_bytes: cap,
              plan: account.plan,
            },
          )
        : declared - ENVELOPE_BYTES > limits.left
          ? tooLarge("The upload would pass this account's media storage quota", {
              quota_bytes: limits.quotaBytes,
              used_bytes: limits.used,
              plan: account.plan,
            })
          : null;
    if (refusal) {
      if (declared > DRAIN_LIMIT) res.setHeader('Connection', 'close');
      uploadBody(req).resume();
      throw refusal;
    }
  }
  return receiveStream(req, res, service, account, altTextField);
}

function receiveStream(
  req: Request,
  res: Response,
  service: TMediaService,
  account: { accountId: string; plan: string },
  altTextField: 'alt_text' | 'altText',
): Promise<{ upload: TStoredUpload; altText: string | null }> {
  // The request itself, or (under an Idempotency-Key) what was read ahead of it followed by the rest.
  const body = uploadBody(req);
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: req.headers,
        limits: { files: 1, fields: 8, parts: 10, fieldSize: 4 * MAX_ALT_TEXT, headerPairs: 20 },
      });
    } catch {
      reject(fileIssue('the body is not multipart/form-data', FIX));
      return;
    }
    let storing: Promise<TStoredUpload> | null = null;
    let altText: string | null = null;
    let failure: AppError | null = null;
    let done = false;

    const fail = (error: unknown) => {
      if (done) return;
      done = true;
      body.unpipe(parser);
      // Let Node drop the rest of a small body (the client then reads the answer); close on a large one.
      const declared = Number(req.headers['content-length']);
      if (!Number.isFinite(declared) || declared > DRAIN_LIMIT) res.setHeader('Connection', 'close');
      body.resume();
      void storing?.then((upload) => service.discard(upload)).catch(() => undefined);
      reject(error);
    };

    parser.on('file', (name, stream) => {
      if (name !== 'file') {
        stream.resume();
        failure ??= fileIssue(`the file part is named "${name.slice(0, 40)}", not "file"`, FIX);
        return;
      }
      storing = service.store(account.accountId, account.plan, stream);
      storing.catch((error) => {
        stream.resume();
        fail(error);
      });
    });
    parser.on('field', (name, value, info) => {
      if (name !== 'alt_text' && name !== 'altText') return;
      if (info.valueTruncated || value.length > MAX_ALT_TEXT) {
        failure ??= new AppError('validation_error', `${altTextField} is too long`, {
          issues: [{ field: altTextField, message: `must be at most ${MAX_ALT_TEXT} characters` }],
        });
        return;
      }
      altText = value.trim() === '' ? null : value;
    });
    parser.on('filesLimit', () => {
      failure ??= fileIssue('more than one file part was sent', 'Send one file per request.');
    });
    parser.on('error', () => fail(fileIssue('the multipart body is malformed', FIX)));
    parser.on('close', async () => {
      if (done) return;
      if (!storing) {
        fail(failure ?? fileIssue('the "file" part is missing', FIX));
        return;
      }
      try {
        const upload = await storing;
        if (done) return;
        if (failure) {
          fail(failure);
          return;
        }
        done = true;
        resolve({ upload, altText });
      } catch (error) {
        fail(error);
      }
    });
    req.on('aborted', () => fail(fileIssue('the upload was interrupted', 'Retry the upload.')));
    body.pipe(parser);
  });
}
