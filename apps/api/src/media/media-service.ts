import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import {
  ACCEPTED_MEDIA_TYPES,
  AppError,
  mediaLimitsOf,
  mediaStorageKey,
  sniffMedia,
  type TMediaPage,
  type TMediaRecord,
} from '@sps/core';
import type { TMediaRepository } from '@sps/db';
import type { TStorage, TStoredObject } from '@sps/storage';
import { imageSize, mp4Header } from './media-probe.js';

/** Bytes of an upload kept for the type check and the image header (the rest only streams through). */
const HEAD_BYTES = 1024 * 1024;
/** Enough bytes for every signature `sniffMedia` knows. */
const SNIFF_AT = 16;

/** An upload whose bytes are in the store but that is not an item yet (its alt text may still come). */
export interface TStoredUpload {
  id: string;
  accountId: string;
  key: string;
  size: number;
  etag: string;
  mimeType: string;
  head: Buffer;
  quotaBytes: number;
}

function megabytes(bytes: number): string {
  return `${Math.round(bytes / (1024 * 1024))} MB`;
}

function unsupported(detail: string): AppError {
  return new AppError(
    'unsupported_media_type',
    `The file is not a media type any network takes (${detail})`,
    {
      issues: [{ field: 'file', message: 'is not a JPEG, PNG, WebP, GIF, MP4, MOV or WebM file' }],
      fix: 'Upload a JPEG, PNG, WebP or GIF image, or an MP4, MOV or WebM video. The type is read from the bytes, not the file name.',
    },
  );
}

export function tooLarge(message: string, details: Record<string, unknown>): AppError {
  return new AppError('payload_too_large', message, {
    issues: [{ field: 'file', message: 'is too large' }],
    details,
  });
}

export function createMediaService(deps: {
  media: TMediaRepository;
  storage: TStorage;
  /** Quota bytes unfinished tus uploads hold (their declared Upload-Length), if tus uploads are served. */
  reservations?: { heldBytes(accountId: string, exceptUpload?: string): Promise<number> };
}) {
  const { media, storage } = deps;

  /**
   * The limits an upload of `plan` is held to, with what the account already keeps (`used`) and what its
   * unfinished tus uploads hold (`held`, but `exceptUpload`'s: the upload being stored counts once).
   */
  async function allowance(accountId: string, plan: string, exceptUpload?: string) {
    const limits = mediaLimitsOf(plan);
    const [used, held] = await Promise.all([
      media.usedBytes(accountId),
      deps.reservations?.heldBytes(accountId, exceptUpload) ?? 0,
    ]);
    return { ...limits, used, held, left: Math.max(0, limits.quotaBytes - used - held) };
  }

  /**
   * Streams `body` into the store, checking as the bytes pass: the type from the first bytes (415), the
   * per-file cap of that type and the quota left (413). A refused upload leaves nothing in the store.
   */
  async function store(
    accountId: string,
    plan: string,
    body: Readable,
    exceptUpload?: string,
  ): Promise<TStoredUpload> {
    const limits = await allowance(accountId, plan, exceptUpload);
    const id = randomUUID();
    const key = mediaStorageKey(id);
    const checks = checker(limits, plan);
    const stored = await storage.put(key, body, { onChunk: checks.check });
    return finish(checks, { id, accountId, key, stored, quotaBytes: limits.quotaBytes });
  }

  /**
   * A finished tus upload put in the store without streaming it through this process: the staged file
   * hard-linked into place (fs) or its pieces copied inside the bucket (S3). The same checks as `store`,
   * on the first bytes read back and the size; a refused upload leaves nothing in the store. Null when the
   * store cannot do it (S3 server without UploadPartCopy, fs staging on another filesystem is still a
   * plain copy here): the caller then streams the upload through `store`.
   */
  async function adopt(
    accountId: string,
    plan: string,
    source: { file: string } | { pieces: Array<{ key: string; size: number }> },
    exceptUpload?: string,
  ): Promise<TStoredUpload | null> {
    const place = (key: string) => {
      if ('file' in source) return storage.adopt ? storage.adopt(key, source.file) : null;
      return storage.compose ? storage.compose(key, source.pieces) : null;
    };
    const limits = await allowance(accountId, plan, exceptUpload);
    const id = randomUUID();
    const key = mediaStorageKey(id);
    const stored = await place(key);
    if (!stored) return null;
    const checks = checker(limits, plan);
    try {
      if (stored.size > 0) {
        const chunks: Buffer[] = [];
        const range = { start: 0, end: Math.min(HEAD_BYTES, stored.size) - 1 };
        for await (const chunk of await storage.get(key, range)) chunks.push(chunk as Buffer);
        const head = Buffer.concat(chunks);
        checks.check(head, head.length);
        checks.check(Buffer.alloc(0), stored.size);
      }
    } catch (error) {
      await storage.delete(key).catch(() => undefined);
      throw error;
    }
    return finish(checks, { id, accountId, key, stored, quotaBytes: limits.quotaBytes });
  }

  /** The checks of an upload as its bytes pass (`onChunk`): type (415), per-file cap and quota (413). */
  function checker(limits: Awaited<ReturnType<typeof allowance>>, plan: string) {
    const state = { headChunks: [] as Buffer[], headLength: 0, mimeType: null as string | null };
    let cap = Math.max(limits.imageBytes, limits.videoBytes);
    const check = (chunk: Buffer, total: number) => {
      if (state.headLength < HEAD_BYTES) {
        const part = chunk.subarray(0, HEAD_BYTES - state.headLength);
        state.headChunks.push(part);
        state.headLength += part.length;
      }
      if (state.mimeType === null && state.headLength >= SNIFF_AT) {
        const sniffed = sniffMedia(Buffer.concat(state.headChunks));
        const accepted = sniffed ? ACCEPTED_MEDIA_TYPES[sniffed.type] : undefined;
        if (!sniffed || !accepted) throw unsupported(sniffed ? sniffed.type : 'unknown bytes');
        state.mimeType = sniffed.type;
        cap = accepted.type === 'video' ? limits.videoBytes : limits.imageBytes;
      }
      if (total > cap) {
        throw tooLarge(
          `The file is larger than the ${megabytes(cap)} this plan allows for one file of its type`,
          {
            limit_bytes: cap,
            plan,
          },
        );
      }
      if (total > limits.left) {
        throw tooLarge(
          `The upload would pass this account's media storage quota of ${megabytes(limits.quotaBytes)}`,
          {
            quota_bytes: limits.quotaBytes,
            used_bytes: limits.used,
            plan,
          },
        );
      }
    };
    return { check, state };
  }

  /** The stored upload once its bytes passed the checks, or nothing left in the store (empty, too short). */
  async function finish(
    checks: ReturnType<typeof checker>,
    upload: { id: string; accountId: string; key: string; stored: TStoredObject; quotaBytes: number },
  ): Promise<TStoredUpload> {
    const { id, accountId, key, stored, quotaBytes } = upload;
    const head = Buffer.concat(checks.state.headChunks);
    const mimeType = checks.state.mimeType;
    const discard = () => storage.delete(key).catch(() => undefined);
    if (stored.size === 0) {
      await discard();
      throw new AppError('validation_error', 'The file is empty', {
        issues: [{ field: 'file', message: 'is empty' }],
      });
    }
    if (mimeType === null) {
      // Fewer bytes than a signature needs: no media file is that small.
      const sniffed = sniffMedia(head);
      await discard();
      throw unsupported(sniffed?.type ?? 'unknown bytes');
    }
    return { id, accountId, key, size: stored.size, etag: stored.etag, mimeType, head, quotaBytes };
  }

  /** Measures a stored upload and records it as an item (within the quota, checked again under a lock). */
  async function record(upload: TStoredUpload, altText: string | null): Promise<TMediaRecord> {
    try {
      const accepted = ACCEPTED_MEDIA_TYPES[upload.mimeType]!;
      const isoVideo = upload.mimeType === 'video/mp4' || upload.mimeType === 'video/quicktime';
      const video = isoVideo ? await mp4Header(storage, upload.key, upload.size) : null;
      const size =
        accepted.type === 'video'
          ? { width: video?.width ?? null, height: video?.height ?? null }
          : await imageSize(upload.head);
      const durationS = video?.durationS ?? null;
      const outcome = await media.insertWithinQuota(
        {
          id: upload.id,
          accountId: upload.accountId,
          storageKey: upload.key,
          type: accepted.type,
          mimeType: upload.mimeType,
          sizeBytes: upload.size,
          ...size,
          durationS,
          altText,
          etag: upload.etag,
        },
        upload.quotaBytes,
      );
      if ('item' in outcome) return outcome.item;
      throw tooLarge(
        `The upload would pass this account's media storage quota of ${megabytes(upload.quotaBytes)}`,
        {
          quota_bytes: upload.quotaBytes,
          used_bytes: outcome.usedBytes,
        },
      );
    } catch (error) {
      await discard(upload);
      throw error;
    }
  }

  async function discard(upload: TStoredUpload): Promise<void> {
    await storage.delete(upload.key).catch(() => undefined);
  }

  async function get(accountId: string, id: string): Promise<TMediaRecord> {
    const item = await media.get(accountId, id);
    if (!item) throw new AppError('not_found', 'Media item not found');
    return item;
  }

  return {
    allowance,
    store,
    adopt,
    record,
    discard,
    get,
    list: (accountId: string, page: TMediaPage) => media.list(accountId, page),

    /** Removes an item no pending post uses: its row first (the URL stops answering), then its bytes. */
    async remove(accountId: string, id: string): Promise<void> {
      const item = await get(accountId, id);
      const posts = await media.pendingPostsUsing(accountId, id);
      if (posts.length > 0) {
        throw new AppError(
          'media_in_use',
          // The ids in the message too: Variant A's error has no code, its text is what names the posts.
          `The media item is used by ${posts.length === 20 ? 'at least 20' : posts.length} pending post(s): ${posts.join(', ')}`,
          {
            fix: 'Remove it from these posts (or delete them) first, then delete the item.',
            details: { post_ids: posts },
          },
        );
      }
      if (await media.remove(accountId, id)) await storage.delete(item.storageKey);
    },
  };
}

export type TMediaService = ReturnType<typeof createMediaService>;
