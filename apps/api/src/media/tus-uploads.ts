import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { AppError, MEDIA_LIMITS } from '@sps/core';
import { Server } from '@tus/server';
import { type DataStore, EVENTS, type Locker } from '@tus/utils';
import type { Request as ExpressRequest, RequestHandler } from 'express';
import type { Logger } from 'pino';
import { bodyB } from '../http/error-handler.js';
import { STATUS_B, toAppError } from '../http/error-mapping.js';
import type { TMediaService } from './media-service.js';
import { ownerPrefix, type TTusReservations } from './tus-reservations.js';

/**
 * A staging store of unfinished uploads that can also read a finished one back as a stream, and say where
 * its bytes are (`source`) so the media store can take them without a copy through this process.
 */
export type TTusStaging = DataStore & {
  read(id: string): Readable | Promise<Readable>;
  source?(id: string): Promise<TStagedSource>;
};

/** Where a finished upload's bytes are: a file on this machine, or pieces in the media store. */
export type TStagedSource = { file: string } | { pieces: Array<{ key: string; size: number }> };

/** `<account id without dashes><32 random hex>`: the upload's owner is part of its id. */
const UPLOAD_ID = /^[0-9a-f]{64}$/;

function authOrNull(req: Request) {
  const node = (req as unknown as { runtime?: { node?: { req: ExpressRequest } } }).runtime?.node?.req;
  return node?.auth ?? null;
}

function authOfTus(req: Request) {
  const auth = authOrNull(req);
  if (!auth) throw { status_code: 401, body: 'Unauthorized\n' };
  return auth;
}

/** The largest file any plan takes: what discovery without an API key (a CORS preflight) announces. */
const LARGEST_FILE = Math.max(
  ...Object.values(MEDIA_LIMITS).flatMap((limits) => [limits.imageBytes, limits.videoBytes]),
);

/** Deferred lengths are refused (the caps are checked at creation), so discovery does not announce them. */
const UNOFFERED_EXTENSIONS = new Set(['creation-defer-length']);

function deferredLengthRefusal() {
  return tusError(
    new AppError('validation_error', 'Upload-Length is required: deferred lengths are not accepted', {
      issues: [{ field: 'Upload-Length', message: 'is required' }],
      fix: 'Send the file size in Upload-Length when creating the upload.',
    }),
  );
}

/** A tus error answer from an AppError: the status of Variant B and its JSON body. */
function tusError(error: unknown) {
  const appError = toAppError(error);
  return { status_code: STATUS_B[appError.code], body: JSON.stringify(bodyB(appError)) };
}

/**
 * tus 1.0 resumable uploads at `/v1/media/uploads` (creation, termination) with `@tus/server`. Behind the
 * API key like the rest of /v1: an upload belongs to the account that created it (its id starts with the
 * account's), and any other account is answered 404. The Upload-Length is required and checked against the
 * plan's per-file cap and the quota left at creation. When the last byte arrives the file is streamed from
 * the staging store into the media store and becomes an item, whose id is the `Media-Id` header of that
 * final PATCH answer. Alt text may come as `alt_text` in Upload-Metadata.
 *
 * Several API instances: with `locker` (Redis) one upload's requests may reach any instance, provided the
 * staging store is shared too; with `reservations` the declared Upload-Length holds its part of the quota
 * from creation until the upload finishes, is terminated or expires.
 */
export function tusUploadsHandler(deps: {
  media: TMediaService;
  staging: TTusStaging;
  /** The origin (and path prefix) of the Location of a created upload; empty for a path-only Location. */
  publicUrl: string;
  logger: Logger;
  /**
   * Where the uploads live under `publicUrl` (the Location of a created upload): `/v1/media/uploads` for
   * API keys, `/dashboard/api/v1/media/uploads` behind the dashboard's session (whose cookie only goes to
   * /dashboard). Both may share one staging store: an upload's id names its account either way.
   */
  path?: string;
  /** tus's lock of an upload across API instances (default: tus's in-process MemoryLocker). */
  locker?: Locker;
  reservations?: TTusReservations;
  /** Whether this handler sweeps the staging store's expired uploads (one handler per store is enough). */
  sweepExpired?: boolean;
}): RequestHandler {
  const { media, staging } = deps;
  const path = deps.path ?? '/v1/media/uploads';
  staging.extensions = staging.extensions.filter((extension) => !UNOFFERED_EXTENSIONS.has(extension));
  const releaseQuota = (id: string) =>
    deps.reservations
      ?.release(id)
      .catch((err: unknown) => deps.logger.warn({ err }, 'tus quota reservation release failed'));
  const server = new Server({
    path,
    datastore: staging,
    ...(deps.locker ? { locker: deps.locker } : {}),
    generateUrl: (_req, { id }) => `${deps.publicUrl}${path}/${id}`,
    getFileIdFromRequest: (_req, lastPath) => (lastPath && UPLOAD_ID.test(lastPath) ? lastPath : undefined),
    namingFunction: (req) => `${ownerPrefix(authOfTus(req).accountId)}${randomBytes(16).toString('hex')}`,
    maxSize: async (req) => {
      // Only OPTIONS reaches here without an account (see the /v1 router): announce the largest of any plan.
      const auth = authOrNull(req);
      if (!auth) return LARGEST_FILE;
      const limits = await media.allowance(auth.accountId, auth.plan);
      return Math.max(limits.imageBytes, limits.videoBytes);
    },
    disableTerminationForFinishedUploads: true,
    exposedHeaders: ['Media-Id'],
    async onIncomingRequest(req, id) {
      if (!id.startsWith(ownerPrefix(authOfTus(req).accountId)))
        throw { status_code: 404, body: 'Not found\n' };
    },
    async onUploadCreate(req, upload) {
      if (upload.size === undefined) throw deferredLengthRefusal();
      const auth = authOfTus(req);
      const limits = await media.allowance(auth.accountId, auth.plan);
      const overQuota = (heldBytes: number) =>
        tusError(
          new AppError('payload_too_large', "The upload would pass this account's media storage quota", {
            issues: [{ field: 'Upload-Length', message: 'is more than the quota left' }],
            details: {
              quota_bytes: limits.quotaBytes,
              used_bytes: limits.used,
              reserved_bytes: heldBytes,
              plan: auth.plan,
            },
            fix: 'Finish or terminate (DELETE) the unfinished uploads of this account, or delete media items.',
          }),
        );
      if (upload.size > limits.left) throw overQuota(limits.held);
      if (deps.reservations) {
        // Atomic with the other uploads' reservations: of two created together, one may be refused here.
        const outcome = await deps.reservations.reserve(
          auth.accountId,
          upload.id,
          upload.size,
          Math.max(0, limits.quotaBytes - limits.used),
        );
        if (!outcome.reserved) throw overQuota(outcome.heldBytes);
      }
      return { metadata: upload.metadata ?? {} };
    },
    async onUploadFinish(req, upload) {
      const auth = authOfTus(req);
      try {
        // Linked (fs) or copied inside the bucket (S3) when the store can; else streamed through here.
        const source = await staging.source?.(upload.id);
        const stored =
          (source && (await media.adopt(auth.accountId, auth.plan, source, upload.id))) ??
          (await media.store(auth.accountId, auth.plan, await staging.read(upload.id), upload.id));
        const alt = upload.metadata?.alt_text ?? upload.metadata?.altText ?? null;
        if (alt !== null && alt.length > 1000) {
          await media.discard(stored);
          throw new AppError('validation_error', 'alt_text is too long', {
            issues: [{ field: 'alt_text', message: 'must be at most 1000 characters' }],
          });
        }
        const item = await media.record(stored, alt && alt.trim() !== '' ? alt : null);
        return { headers: { 'Media-Id': item.id } };
      } catch (error) {
        throw tusError(error);
      } finally {
        const cleanup = () =>
          staging
            .remove(upload.id)
            .catch((err: unknown) => deps.logger.warn({ err }, 'tus staging cleanup failed'));
        // A whole file in the creation request (creation-with-upload): @tus/server reads the upload back
        // after this hook for its Upload-Expires, so the staging copy goes once the answer is out (removed
        // here, that read was a 404 for an item already made, and a client retrying would make another).
        const nodeRes = (req as unknown as { runtime?: { node?: { res?: ServerResponse } } }).runtime?.node
          ?.res;
        if (req.method === 'POST' && nodeRes) nodeRes.once('close', () => void cleanup());
        else await cleanup();
        await releaseQuota(upload.id);
      }
    },
    onResponseError: async (_req, error) => {
      const status = (error as { status_code?: number }).status_code;
      if (status !== undefined) return undefined;
      deps.logger.error({ err: error }, 'tus upload failed');
      return tusError(error);
    },
  });
  // A terminated upload (DELETE) gives its bytes back; an expired one's reservation lapses on its own.
  server.on(EVENTS.POST_TERMINATE, (_req, _res, id) => void releaseQuota(id));
  // Uploads left unfinished past the staging store's expiration (24 h) are removed hourly.
  if (deps.sweepExpired !== false) {
    const cleanup = setInterval(
      () =>
        void server
          .cleanUpExpiredUploads()
          .catch((err: unknown) => deps.logger.warn({ err }, 'tus cleanup of expired uploads failed')),
      60 * 60 * 1000,
    );
    cleanup.unref();
  }
  return (req, res) => {
    // Without the extension @tus/server would answer 501; a missing Upload-Length is the client's to fix.
    if (req.method === 'POST' && req.headers['upload-defer-length'] !== undefined) {
      const refusal = deferredLengthRefusal();
      res
        .status(refusal.status_code)
        .set({ 'Tus-Resumable': '1.0.0', 'Content-Type': 'application/json' })
        .send(refusal.body);
      return;
    }
    void server.handle(req, res);
  };
}
