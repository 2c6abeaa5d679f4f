import { createHash, randomBytes } from 'node:crypto';
import type { Request, Response, Router } from 'express';
import { graphError } from './graph-sim.js';
import { bearerOf } from './oauth/oauth-store.js';

/**
 * Meta's Resumable Upload API, as Facebook Page videos use it
 * (https://developers.facebook.com/docs/graph-api/guides/upload, read 2026-11-26):
 * `POST /{app-id}/uploads?file_name&file_length&file_type` with a user access token → `{id: "upload:<id>"}`;
 * `POST /upload:<id>` with `Authorization: OAuth <token>`, a `file_offset` header and the bytes → `{h}`;
 * `GET /upload:<id>` → `{id, file_offset}` (where an interrupted upload goes on).
 *
 * Refusals: a bad offset is answered as Meta answers video transfer problems (code 6001, subcode 1363037,
 * `error_data.start_offset/end_offset`, as reported from the Graph API in restfb/restfb#737 and
 * facebookarchive/php-graph-sdk#821); an unknown session is Graph's unknown object (code 100, subcode 33);
 * the rest (a missing token, a Page token, a wrong length or type) is Modeled: code 100 "Invalid parameter"
 * or Graph's code 2500 for no token, since no page quotes them.
 */

/** Sessions and handles kept at most (oldest dropped first), so a long-running simulator stays bounded. */
const KEPT = 500;

/** The Resumable Upload API's file types (the guide's list). */
const FILE_TYPES = new Set(['application/pdf', 'image/jpeg', 'image/jpg', 'image/png', 'video/mp4']);

interface TSession {
  appId: string;
  fileName: string;
  fileLength: number;
  fileType: string;
  token: string;
  received: Buffer[];
  offset: number;
}

/** A file every byte of which arrived: what a publish with its handle gets. */
export interface TUploadedFile {
  fileName: string;
  fileType: string;
  length: number;
  sha256: string;
}

/** The token of `Authorization: OAuth …` (Meta's form for uploads), a bearer header or `access_token`. */
const tokenOf = (req: Request): string | null => bearerOf(req);

function noToken(res: Response): void {
  graphError(
    res,
    401,
    2500,
    'An active access token must be used to query information about the current user.',
  );
}

function unknownSession(res: Response, id: string): void {
  graphError(
    res,
    400,
    100,
    `Unsupported post request. Object with ID '${id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation.`,
    { type: 'GraphMethodException', error_subcode: 33 },
  );
}

/** Registers the upload routes on the versioned Graph router; returns the handle look-up for publishes. */
export function registerFacebookUploads(api: Router): (handle: string) => TUploadedFile | undefined {
  const sessions = new Map<string, TSession>();
  const files = new Map<string, TUploadedFile>();

  api.post('/:appId/uploads', (req, res) => {
    const token = tokenOf(req);
    if (!token) return noToken(res);
    // Modeled: the API documents a user access token; the simulator's Page tokens are refused.
    if (token.startsWith('sim-facebook-at-page-')) {
      graphError(res, 400, 100, '(#100) The upload session must be started with a user access token.');
      return;
    }
    const { file_name: fileName, file_length: rawLength, file_type: fileType } = req.query;
    const fileLength = Number(rawLength);
    if (typeof rawLength !== 'string' || !Number.isInteger(fileLength) || fileLength <= 0) {
      graphError(res, 400, 100, '(#100) The parameter file_length is required');
      return;
    }
    if (typeof fileType !== 'string' || !FILE_TYPES.has(fileType)) {
      graphError(
        res,
        400,
        100,
        '(#100) Param file_type must be one of {application/pdf, image/jpeg, image/jpg, image/png, video/mp4}',
      );
      return;
    }
    const id = `upload:${randomBytes(16).toString('base64url')}`;
    if (sessions.size >= KEPT) sessions.delete(sessions.keys().next().value ?? '');
    sessions.set(id, {
      appId: req.params.appId,
      fileName: typeof fileName === 'string' ? fileName : '',
      fileLength,
      fileType,
      token,
      received: [],
      offset: 0,
    });
    res.json({ id });
  });

  const sessionOf = (req: Request, res: Response): TSession | null | undefined => {
    const id = String(req.params.session ?? '');
    if (!id.startsWith('upload:')) return null;
    if (!tokenOf(req)) {
      noToken(res);
      return undefined;
    }
    const session = sessions.get(id);
    if (!session) {
      unknownSession(res, id);
      return undefined;
    }
    return session;
  };

  api.get('/:session', (req, res, next) => {
    const session = sessionOf(req, res);
    if (session === null) return next();
    if (!session) return;
    res.json({ id: req.params.session, file_offset: session.offset });
  });

  api.post('/:session', (req, res, next) => {
    const session = sessionOf(req, res);
    if (session === null) return next();
    if (!session) return;
    const offset = Number(req.headers.file_offset);
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    if (!Number.isInteger(offset) || offset !== session.offset) {
      graphError(res, 400, 6001, 'There was a problem uploading your video. Please try again.', {
        error_data: { start_offset: session.offset, end_offset: session.fileLength },
        error_subcode: 1363037,
        is_transient: false,
        error_user_title: 'Error Uploading Video',
        error_user_msg: 'There was a problem uploading your video. Please try uploading it again.',
      });
      return;
    }
    if (offset + body.length > session.fileLength) {
      graphError(res, 400, 100, '(#100) The file is longer than the file_length of the upload session', {
        error_data: { start_offset: session.offset, end_offset: session.fileLength },
      });
      return;
    }
    session.received.push(body);
    session.offset += body.length;
    if (session.offset < session.fileLength) {
      // A short body: the bytes are kept and GET tells where to go on; no handle yet.
      res.json({ id: req.params.session, file_offset: session.offset });
      return;
    }
    const bytes = Buffer.concat(session.received);
    const handle = `4:${Buffer.from(session.fileName || 'file').toString('base64')}:${session.fileType}:${randomBytes(12).toString('hex')}`;
    if (files.size >= KEPT) files.delete(files.keys().next().value ?? '');
    files.set(handle, {
      fileName: session.fileName,
      fileType: session.fileType,
      length: bytes.length,
      sha256: createHash('sha256').update(bytes).digest('hex'),
    });
    sessions.delete(String(req.params.session));
    res.json({ h: handle });
  });

  return (handle) => files.get(handle);
}
