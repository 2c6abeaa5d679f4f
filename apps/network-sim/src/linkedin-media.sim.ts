import { createHash, type Hash } from 'node:crypto';
import type { Request, Response, Router } from 'express';

// LinkedIn's Images and Videos APIs as the simulator holds them: an asset is WAITING_UPLOAD until its
// bytes arrive, then PROCESSING, then AVAILABLE; only an AVAILABLE asset may appear in a post.
// https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/images-api
// https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/videos-api

export type TAssetStatus = 'WAITING_UPLOAD' | 'PROCESSING' | 'AVAILABLE' | 'PROCESSING_FAILED';

interface TAsset {
  urn: string;
  owner: string;
  status: TAssetStatus;
  bytes: number;
  /** Status reads while PROCESSING before it turns AVAILABLE (videos take one read here). */
  processingReads: number;
  /** Videos: the parts' expected sizes and the ETags handed out, in order. */
  parts: { size: number; etag: string | null }[];
  uploadToken: string;
  /** Bytes starting with `fail-processing` end in PROCESSING_FAILED (a test hook). */
  failProcessing: boolean;
  /** sha256 of the bytes in part order (parts sent out of order leave it null: not assembled here). */
  hash: Hash;
  nextPart: number;
  inOrder: boolean;
  sha256: string | null;
}

export const LINKEDIN_SIM_PART_BYTES = 4 * 1024 * 1024;
const MAX_IMAGE_BYTES = 5 * 1024 * 1024;
const MAX_VIDEO_BYTES = 500 * 1024 * 1024;

type TError = (res: Response, status: number, code: string, message: string) => void;

export interface TLinkedInAssets {
  /** Why a post may not reference this URN yet, or null when it is AVAILABLE. */
  unusable(urn: string): string | null;
  /** What arrived for an asset: its size and the sha256 of its assembled bytes. */
  uploaded(urn: string): { bytes: number; sha256: string | null } | null;
}

const origin = (req: Request) => `${req.protocol}://${req.get('host')}${req.baseUrl}`;
const rawBytes = (req: Request): Buffer => (Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0));

export function registerLinkedInAssets(
  router: Router,
  guard: (req: Request, res: Response) => boolean,
  error: TError,
  nextId: () => string,
  /** Uploading for an owner the member may not post as is refused like the post itself. */
  refuseOwner: (req: Request, res: Response, owner: string) => boolean = () => false,
): TLinkedInAssets {
  const assets = new Map<string, TAsset>();
  // An image's or video's initializeUpload without an `urn:li:` owner.
  const ownerRequired = (res: Response) =>
    error(
      res,
      400,
      'ILLEGAL_ARGUMENT',
      'ERROR :: /initializeUploadRequest/owner :: field is required but not found',
    );

  const create = (urn: string, owner: string, parts: TAsset['parts']): TAsset => {
    const asset: TAsset = {
      urn,
      owner,
      status: 'WAITING_UPLOAD',
      bytes: 0,
      processingReads: urn.startsWith('urn:li:video:') ? 1 : 0,
      parts,
      uploadToken: urn.startsWith('urn:li:video:') ? `token-${nextId()}` : '',
      failProcessing: false,
      hash: createHash('sha256'),
      nextPart: 0,
      inOrder: true,
      sha256: null,
    };
    assets.set(urn, asset);
    return asset;
  };

  router.post('/rest/images', (req, res) => {
    if (!guard(req, res)) return;
    const owner = (req.body as { initializeUploadRequest?: { owner?: string } })?.initializeUploadRequest
      ?.owner;
    if (req.query.action !== 'initializeUpload' || !owner?.startsWith('urn:li:')) {
      ownerRequired(res);
      return;
    }
    if (refuseOwner(req, res, owner)) return;
    const urn = `urn:li:image:C4E${nextId()}`;
    create(urn, owner, []);
    res.json({
      value: {
        uploadUrlExpiresAt: Date.now() + 3_600_000,
        uploadUrl: `${origin(req)}/__upload/${encodeURIComponent(urn)}/0`,
        image: urn,
      },
    });
  });

  router.post('/rest/videos', (req, res) => {
    if (!guard(req, res)) return;
    if (req.query.action === 'finalizeUpload') {
      finalize(req, res);
      return;
    }
    const init = (req.body as { initializeUploadRequest?: { owner?: string; fileSizeBytes?: number } })
      ?.initializeUploadRequest;
    const size = init?.fileSizeBytes;
    if (req.query.action !== 'initializeUpload' || !init?.owner?.startsWith('urn:li:')) {
      ownerRequired(res);
      return;
    }
    if (refuseOwner(req, res, init.owner)) return;
    if (typeof size !== 'number' || !Number.isInteger(size) || size <= 0 || size > MAX_VIDEO_BYTES) {
      error(
        res,
        400,
        'ILLEGAL_ARGUMENT',
        `ERROR :: /initializeUploadRequest/fileSizeBytes :: ${size} is outside 1..${MAX_VIDEO_BYTES}`,
      );
      return;
    }
    const urn = `urn:li:video:C5F${nextId()}`;
    const count = Math.ceil(size / LINKEDIN_SIM_PART_BYTES);
    const parts = Array.from({ length: count }, (_, i) => ({
      size: Math.min(LINKEDIN_SIM_PART_BYTES, size - i * LINKEDIN_SIM_PART_BYTES),
      etag: null,
    }));
    const asset = create(urn, init.owner, parts);
    res.json({
      value: {
        uploadUrlsExpireAt: Date.now() + 3_600_000,
        video: urn,
        uploadInstructions: parts.map((_, i) => ({
          uploadUrl: `${origin(req)}/__upload/${encodeURIComponent(urn)}/${i}`,
          firstByte: i * LINKEDIN_SIM_PART_BYTES,
          lastByte: i * LINKEDIN_SIM_PART_BYTES + (parts[i]?.size ?? 0) - 1,
        })),
        uploadToken: asset.uploadToken,
      },
    });
  });

  // The upload host: bytes of an image, or one part of a video.
  router.put('/__upload/:urn/:part', (req, res) => {
    const asset = assets.get(req.params.urn ?? '');
    if (!req.headers.authorization?.startsWith('Bearer ')) {
      error(res, 401, 'INVALID_ACCESS_TOKEN', 'Empty oauth2 access token');
      return;
    }
    if (asset?.status !== 'WAITING_UPLOAD') {
      error(res, 400, 'ILLEGAL_ARGUMENT', 'The upload URL is not valid or has expired');
      return;
    }
    const bytes = rawBytes(req);
    if (asset.urn.startsWith('urn:li:image:')) {
      if (bytes.length === 0 || bytes.length > MAX_IMAGE_BYTES) {
        error(
          res,
          400,
          'ILLEGAL_ARGUMENT',
          `Image size ${bytes.length} is outside 1..${MAX_IMAGE_BYTES} bytes`,
        );
        return;
      }
      asset.bytes = bytes.length;
      asset.sha256 = createHash('sha256').update(bytes).digest('hex');
      asset.status = 'AVAILABLE';
      res.status(201).end();
      return;
    }
    const part = asset.parts[Number(req.params.part)];
    if (!part || bytes.length !== part.size) {
      error(
        res,
        400,
        'ILLEGAL_ARGUMENT',
        `Part ${req.params.part} must be ${part?.size ?? 0} bytes, got ${bytes.length}`,
      );
      return;
    }
    if (req.params.part === '0')
      asset.failProcessing = bytes.subarray(0, 15).toString() === 'fail-processing';
    part.etag = `"etag-${nextId()}"`;
    asset.bytes += bytes.length;
    if (Number(req.params.part) === asset.nextPart) {
      asset.hash.update(bytes);
      asset.nextPart += 1;
    } else asset.inOrder = false;
    res.status(200).set('etag', part.etag).end();
  });

  function finalize(req: Request, res: Response) {
    const body = (
      req.body as {
        finalizeUploadRequest?: { video?: string; uploadToken?: string; uploadedPartIds?: unknown };
      }
    )?.finalizeUploadRequest;
    const asset = assets.get(body?.video ?? '');
    const ids = Array.isArray(body?.uploadedPartIds) ? body.uploadedPartIds : [];
    if (asset?.status !== 'WAITING_UPLOAD' || body?.uploadToken !== asset.uploadToken) {
      error(
        res,
        400,
        'ILLEGAL_ARGUMENT',
        'ERROR :: /finalizeUploadRequest/video :: the video is not awaiting an upload',
      );
      return;
    }
    if (ids.length !== asset.parts.length || asset.parts.some((p, i) => !p.etag || p.etag !== ids[i])) {
      error(
        res,
        400,
        'ILLEGAL_ARGUMENT',
        'ERROR :: /finalizeUploadRequest/uploadedPartIds :: does not match the uploaded parts',
      );
      return;
    }
    asset.status = 'PROCESSING';
    asset.sha256 = asset.inOrder ? asset.hash.digest('hex') : null;
    res.status(200).end();
  }

  const read = (kind: 'images' | 'videos') => (req: Request, res: Response) => {
    if (!guard(req, res)) return;
    const asset = assets.get(String(req.params.urn ?? ''));
    if (!asset?.urn.startsWith(`urn:li:${kind === 'images' ? 'image' : 'video'}:`)) {
      error(res, 404, 'NOT_FOUND', `Not Found: ${req.params.urn}`);
      return;
    }
    if (asset.status === 'PROCESSING') {
      if (asset.processingReads > 0) asset.processingReads -= 1;
      else asset.status = asset.failProcessing ? 'PROCESSING_FAILED' : 'AVAILABLE';
    }
    res.json({
      id: asset.urn,
      owner: asset.owner,
      status: asset.status,
      ...(asset.status === 'PROCESSING_FAILED'
        ? { processingFailureReason: 'Video transcoding failed' }
        : {}),
    });
  };
  router.get('/rest/images/:urn', read('images'));
  router.get('/rest/videos/:urn', read('videos'));

  return {
    uploaded(urn) {
      const asset = assets.get(urn);
      return asset ? { bytes: asset.bytes, sha256: asset.sha256 } : null;
    },
    unusable(urn) {
      const asset = assets.get(urn);
      if (!asset) return `${urn} does not exist`;
      return asset.status === 'AVAILABLE' ? null : `${urn} is not AVAILABLE (status ${asset.status})`;
    },
  };
}
