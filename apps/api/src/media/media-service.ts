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
import type { TStorage } from '@sps/storage';
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
    const headChunks: Buffer[] = [];
    let headLength = 0;
    let mimeType: string | null = null;
    let cap = Math.max(limits.imageBytes, limits.videoBytes);
    const check = (chunk: Buffer, total: number) => {
      if (headLength < HEAD_BYTES) {
        const part = chunk.subarray(0, HEAD_BYTES - headLength);
        headChunks.push(part);
        headLength += part.length;
      }
      if (mimeType === null && headLength >= SNIFF_AT) {
        const sniffed = sniffMedia(Buffer.concat(headChunks));
        const accepted = sniffed ? ACCEPTED_MEDIA_TYPES[sniffed.type] : undefined;
        if (!sniffed || !accepted) throw unsupported(sniffed ? sniffed.type : 'unknown bytes');
        mimeType = sniffed.type;
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
    const stored = await storage.put(key, body, { onChunk: check });
    const head = Buffer.concat(headChunks);
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
    return {
      id,
      accountId,
      key,
      size: stored.size,
      etag: stored.etag,
      mimeType,
      head,
      quotaBytes: limits.quotaBytes,
    };
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
