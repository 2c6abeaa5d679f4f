import { createHash, type Hash } from 'node:crypto';
import type { Request, Response, Router } from 'express';
import { fileOf, readForm } from './multipart.sim.js';
import type { SimState } from './sim-state.js';

/**
 * X's v2 media upload, as strict as X: simple upload for images, chunked upload (initialize, append,
 * finalize, STATUS) for GIFs and videos, and a Post may only carry media whose processing succeeded.
 * https://docs.x.com/x-api/media/quickstart/media-upload-chunked
 */

/** X API v2 problem document for a bad parameter (the shape POST /2/tweets answers too). */
export function invalidRequest(res: Response, message: string, parameters: Record<string, unknown> = {}) {
  res.status(400).json({
    errors: [{ parameters, message }],
    title: 'Invalid Request',
    detail: 'One or more parameters to your request was invalid.',
    type: 'https://api.twitter.com/2/problems/invalid-request',
  });
}

export function requireBearer(req: Request, res: Response): boolean {
  if (req.headers.authorization?.startsWith('Bearer ')) return true;
  res.status(401).json({ title: 'Unauthorized', type: 'about:blank', status: 401, detail: 'Unauthorized' });
  return false;
}

type TCategory = 'tweet_image' | 'tweet_gif' | 'tweet_video' | 'amplify_video';

/** https://docs.x.com/x-api/media/introduction: image 5 MB, GIF 15 MB, video 512 MB. */
const CATEGORY_LIMITS: Record<TCategory, number> = {
  tweet_image: 5 * 1024 * 1024,
  tweet_gif: 15 * 1024 * 1024,
  tweet_video: 512 * 1024 * 1024,
  amplify_video: 512 * 1024 * 1024,
};
/** Initialize's media_type enum, per category (https://docs.x.com/x-api/media/initialize-media-upload). */
const CATEGORY_TYPES: Record<TCategory, readonly string[]> = {
  tweet_image: ['image/jpeg', 'image/pjpeg', 'image/png', 'image/webp', 'image/bmp', 'image/tiff'],
  tweet_gif: ['image/gif'],
  tweet_video: ['video/mp4', 'video/webm', 'video/mp2t', 'video/quicktime'],
  amplify_video: ['video/mp4', 'video/webm', 'video/mp2t', 'video/quicktime'],
};
/** The simple upload takes tweet_image only, and no GIF (https://docs.x.com/x-api/media/upload-media). */
const SIMPLE_TYPES = CATEGORY_TYPES.tweet_image;
/** Bytes that make the simulated processing fail, as X fails an undecodable video. */
export const X_FAIL_PROCESSING_MARKER = 'fail-processing';

export interface TSimXMedia {
  id: string;
  category: TCategory;
  type: string;
  totalBytes: number;
  received: number;
  /** The first bytes, enough to see the failure marker. */
  head: Buffer;
  segments: Set<number>;
  finalized: boolean;
  /** When initialize made it: processing ends no sooner than `PUT /__sim/processing/twitter` says. */
  createdAt: number;
  /** Processing state as STATUS reports it; images are `succeeded` at once. */
  state: 'pending' | 'in_progress' | 'succeeded' | 'failed';
  altText: string | null;
  /** sha256 of the segments in segment_index order, as X assembles them; set at finalize. */
  hash: Hash;
  nextSegment: number;
  /** Segments that arrived ahead of their turn, held until the gap is filled. */
  early: Map<number, Buffer>;
  sha256: string | null;
}

export type TSimXMediaStore = Map<string, TSimXMedia>;

const isCategory = (value: unknown): value is TCategory =>
  typeof value === 'string' && Object.hasOwn(CATEGORY_LIMITS, value);

function view(media: TSimXMedia) {
  const processing =
    media.category === 'tweet_image'
      ? undefined
      : media.state === 'failed'
        ? {
            state: 'failed',
            progress_percent: 12,
            error: { code: 1, name: 'InvalidMedia', message: 'Unsupported video format' },
          }
        : media.state === 'succeeded'
          ? { state: 'succeeded', progress_percent: 100 }
          : { state: media.state, check_after_secs: 1, progress_percent: media.state === 'pending' ? 0 : 50 };
  return {
    id: media.id,
    media_key: `${media.category === 'tweet_image' ? 3 : media.category === 'tweet_gif' ? 16 : 7}_${media.id}`,
    size: media.received,
    expires_after_secs: 86400,
    ...(processing ? { processing_info: processing } : {}),
  };
}

export function registerTwitterMediaRoutes(router: Router, sim: SimState, store: TSimXMediaStore): void {
  function find(id: unknown, res: Response): TSimXMedia | null {
    const media = typeof id === 'string' ? store.get(id) : undefined;
    if (media) return media;
    invalidRequest(res, `The media_id ${String(id).slice(0, 30)} is not a valid media upload.`, {
      media_id: [String(id).slice(0, 30)],
    });
    return null;
  }

  // Simple upload: one request, images only.
  router.post('/2/media/upload', (req, res) => {
    if (!requireBearer(req, res)) return;
    const body = (req.body ?? {}) as { media?: unknown; media_category?: unknown; media_type?: unknown };
    if (typeof body.media !== 'string' || body.media.length === 0) {
      invalidRequest(res, 'The `media` field is required.');
      return;
    }
    const category = body.media_category ?? 'tweet_image';
    if (category !== 'tweet_image') {
      invalidRequest(res, `The media_category ${String(category)} cannot be uploaded in one request.`);
      return;
    }
    if (typeof body.media_type !== 'string' || !SIMPLE_TYPES.includes(body.media_type)) {
      invalidRequest(res, `The media_type ${String(body.media_type)} is not allowed for tweet_image.`);
      return;
    }
    const bytes = Buffer.from(body.media, 'base64');
    if (bytes.length > CATEGORY_LIMITS.tweet_image) {
      invalidRequest(res, `File size exceeds ${CATEGORY_LIMITS.tweet_image} bytes.`);
      return;
    }
    const id = sim.nextNumericId();
    const media: TSimXMedia = {
      id,
      category: 'tweet_image',
      type: body.media_type,
      totalBytes: bytes.length,
      received: bytes.length,
      head: bytes.subarray(0, 64),
      segments: new Set([0]),
      finalized: true,
      createdAt: Date.now(),
      state: 'succeeded',
      altText: null,
      hash: createHash('sha256'),
      nextSegment: 1,
      early: new Map(),
      sha256: createHash('sha256').update(bytes).digest('hex'),
    };
    store.set(id, media);
    res.json({ data: view(media) });
  });

  router.post('/2/media/upload/initialize', (req, res) => {
    if (!requireBearer(req, res)) return;
    const body = (req.body ?? {}) as {
      media_category?: unknown;
      media_type?: unknown;
      total_bytes?: unknown;
    };
    if (!isCategory(body.media_category)) {
      invalidRequest(res, `The media_category ${String(body.media_category)} is not supported.`);
      return;
    }
    const category = body.media_category;
    if (typeof body.media_type !== 'string' || !CATEGORY_TYPES[category].includes(body.media_type)) {
      invalidRequest(
        res,
        `The media_type ${String(body.media_type)} does not match media_category ${category}.`,
      );
      return;
    }
    const total = body.total_bytes;
    if (typeof total !== 'number' || !Number.isInteger(total) || total <= 0) {
      invalidRequest(res, 'The `total_bytes` field must be a positive integer.');
      return;
    }
    if (total > CATEGORY_LIMITS[category]) {
      invalidRequest(res, `File size exceeds ${CATEGORY_LIMITS[category]} bytes.`);
      return;
    }
    const id = sim.nextNumericId();
    const media: TSimXMedia = {
      id,
      category,
      type: body.media_type,
      totalBytes: total,
      received: 0,
      head: Buffer.alloc(0),
      segments: new Set(),
      finalized: false,
      createdAt: Date.now(),
      state: 'pending',
      altText: null,
      hash: createHash('sha256'),
      nextSegment: 0,
      early: new Map(),
      sha256: null,
    };
    store.set(id, media);
    res.json({ data: { id, media_key: view(media).media_key, expires_after_secs: 86400 } });
  });

  // Both body forms of https://docs.x.com/x-api/media/append-media-upload: JSON with base64 `media`, or
  // multipart/form-data with `media` as a file part.
  router.post('/2/media/upload/:id/append', async (req, res) => {
    if (!requireBearer(req, res)) return;
    const media = find(req.params.id, res);
    if (!media) return;
    const form = await readForm(req);
    const part = form ? await fileOf(form.get('media')) : null;
    const body = (
      form ? { segment_index: form.get('segment_index') ?? undefined, media: part?.bytes } : (req.body ?? {})
    ) as { media?: unknown; segment_index?: unknown };
    const index =
      body.segment_index === undefined || body.segment_index === '' ? Number.NaN : Number(body.segment_index);
    if (!Number.isInteger(index) || index < 0 || index > 999) {
      invalidRequest(res, 'The `segment_index` field must be an integer from 0 to 999.');
      return;
    }
    const raw = body.media;
    if (!(typeof raw === 'string' || Buffer.isBuffer(raw)) || raw.length === 0) {
      invalidRequest(res, 'The `media` field is required.');
      return;
    }
    if (media.finalized) {
      invalidRequest(res, 'The media upload is already finalized.');
      return;
    }
    const chunk = typeof raw === 'string' ? Buffer.from(raw, 'base64') : raw;
    if (chunk.length > 5 * 1024 * 1024) {
      invalidRequest(res, 'The media segment must be at most 5 MB.');
      return;
    }
    if (media.received + chunk.length > media.totalBytes) {
      invalidRequest(res, `Segment ${index} goes beyond the declared total_bytes of ${media.totalBytes}.`);
      return;
    }
    if (media.segments.has(index)) {
      invalidRequest(res, `Segment ${index} was already appended.`);
      return;
    }
    media.received += chunk.length;
    media.segments.add(index);
    // Hashed in segment order as X assembles the file (an early segment waits for the ones before it).
    media.early.set(index, chunk);
    for (let next = media.early.get(media.nextSegment); next; next = media.early.get(media.nextSegment)) {
      media.hash.update(next);
      media.early.delete(media.nextSegment);
      media.nextSegment += 1;
    }
    if (media.head.length < 64) media.head = Buffer.concat([media.head, chunk.subarray(0, 64)]);
    res.json({ data: { expires_at: Math.floor(Date.now() / 1000) + 86400 } });
  });

  router.post('/2/media/upload/:id/finalize', (req, res) => {
    if (!requireBearer(req, res)) return;
    const media = find(req.params.id, res);
    if (!media) return;
    if (media.received !== media.totalBytes || media.early.size > 0) {
      invalidRequest(res, 'Segments do not add up to provided total file size.');
      return;
    }
    media.finalized = true;
    media.sha256 ??= media.hash.digest('hex');
    if (media.category === 'tweet_image') media.state = 'succeeded';
    res.json({ data: view(media) });
  });

  // STATUS: each check moves processing one step and reports it: in_progress, then succeeded (or failed),
  // held in_progress while the processing time set through `PUT /__sim/processing/twitter` runs.
  router.get('/2/media/upload', (req, res) => {
    if (!requireBearer(req, res)) return;
    if (req.query.command !== 'STATUS') {
      invalidRequest(res, 'The `command` query parameter must be STATUS.');
      return;
    }
    const media = find(req.query.media_id, res);
    if (!media) return;
    if (!media.finalized) {
      invalidRequest(res, 'The media upload has not been finalized.');
      return;
    }
    if (media.state === 'pending') media.state = 'in_progress';
    else if (media.state === 'in_progress' && sim.processed('twitter', media.createdAt)) {
      media.state = media.head.includes(X_FAIL_PROCESSING_MARKER) ? 'failed' : 'succeeded';
    }
    res.json({ data: view(media) });
  });

  router.post('/2/media/metadata', (req, res) => {
    if (!requireBearer(req, res)) return;
    const body = (req.body ?? {}) as { id?: unknown; metadata?: { alt_text?: { text?: unknown } } };
    const media = find(body.id, res);
    if (!media) return;
    const text = body.metadata?.alt_text?.text;
    if (typeof text !== 'string' || text.length > 1000) {
      invalidRequest(res, 'The alt text must be a string of at most 1000 characters.');
      return;
    }
    media.altText = text;
    res.json({ data: { id: media.id, associated_metadata: true } });
  });
}

/**
 * Why a Post cannot carry these media ids, or null: every id must be an upload whose processing
 * succeeded, and a Post holds up to 4 images or one GIF or one video.
 * https://docs.x.com/x-api/media/quickstart/best-practices
 */
export function mediaIdsProblem(store: TSimXMediaStore, ids: readonly unknown[]): string | null {
  if (ids.length > 4) return 'A Post may carry at most 4 media.';
  const media = ids.map((id) => (typeof id === 'string' ? store.get(id) : undefined));
  if (media.some((m) => m?.state !== 'succeeded')) return 'Your media IDs are invalid.';
  if (media.length > 1 && media.some((m) => m?.category !== 'tweet_image')) {
    return 'Your media IDs are invalid.';
  }
  return null;
}
