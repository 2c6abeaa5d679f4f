import type { Metadata } from 'sharp';

// libvips loads on the first re-encode, not in every process that imports @sps/networks (API, webhooks).
const loadSharp = async () => (await import('sharp')).default;

/**
 * Re-encodes an image a network cannot take as it is (over its byte limit, or in a type it refuses)
 * with sharp (libvips): first at the original size with falling JPEG/WebP quality, then at smaller
 * dimensions, until it fits. Animated GIFs are not re-encoded (a JPEG would drop the animation) and
 * neither are videos: both are refused when too large.
 */
export type TFitResult = { ok: true; bytes: Buffer; type: string } | { ok: false; reason: string };

export interface TFitRequest {
  bytes: Buffer;
  /** Sniffed MIME type of the bytes. */
  type: string;
  maxBytes: number;
  /** Image types the network takes; missing means any image type. */
  accept?: readonly string[] | undefined;
}

/** Decompression-bomb bound: libvips refuses to decode more pixels than this (~50 megapixels). */
const MAX_INPUT_PIXELS = 50_000_000;
/** No network shows more than this; larger sides only cost bytes (X and Bluesky downscale to ≤ 4096). */
const MAX_SIDE = 4096;
/** Below this the image is no longer useful on any network: refuse instead of shrinking further. */
const MIN_SIDE = 320;
const QUALITIES = [85, 75, 60, 45] as const;
const SHRINK = 0.75;
/** Bounds the encodes one image may cost (each is a full decode and encode). */
const MAX_ATTEMPTS = 14;

function outputFormat(type: string, accept: readonly string[] | undefined): 'jpeg' | 'webp' | null {
  const takes = (t: string) => !accept || accept.includes(t);
  // WebP keeps transparency and compresses better; use it when the source is WebP and the network takes it.
  if (type === 'image/webp' && takes('image/webp')) return 'webp';
  if (takes('image/jpeg')) return 'jpeg';
  if (takes('image/webp')) return 'webp';
  return null;
}

export async function fitImage({ bytes, type, maxBytes, accept }: TFitRequest): Promise<TFitResult> {
  const accepted = !accept || accept.includes(type);
  if (accepted && bytes.length <= maxBytes) return { ok: true, bytes, type };

  const format = outputFormat(type, accept);
  if (!format) return { ok: false, reason: `the file is a ${type} image, a type the network does not take` };

  const sharp = await loadSharp();
  let meta: Metadata;
  try {
    meta = await sharp(bytes, { limitInputPixels: MAX_INPUT_PIXELS }).metadata();
  } catch {
    return { ok: false, reason: 'the image could not be read (damaged, or larger than 50 megapixels)' };
  }
  if ((meta.pages ?? 1) > 1) {
    return accepted
      ? {
          ok: false,
          reason: `the image is animated and ${bytes.length} bytes, over the limit of ${maxBytes} bytes (animated images are not re-encoded)`,
        }
      : { ok: false, reason: `the image is an animated ${type}, a type the network does not take` };
  }
  const width = meta.autoOrient?.width ?? meta.width ?? 0;
  const height = meta.autoOrient?.height ?? meta.height ?? 0;
  let side = Math.min(Math.max(width, height), MAX_SIDE);
  let attempts = 0;
  let smallest = Number.POSITIVE_INFINITY;

  // The first pass keeps the size (even a small image may only need a new type); later ones shrink.
  for (let pass = 0; (pass === 0 || side >= MIN_SIDE) && attempts < MAX_ATTEMPTS; pass += 1) {
    for (const quality of QUALITIES) {
      if (attempts >= MAX_ATTEMPTS) break;
      attempts += 1;
      try {
        // rotate() applies the EXIF orientation before metadata (with any location data) is dropped.
        const pipeline = sharp(bytes, { limitInputPixels: MAX_INPUT_PIXELS })
          .rotate()
          .resize({ width: side, height: side, fit: 'inside', withoutEnlargement: true });
        const out =
          format === 'webp'
            ? await pipeline.webp({ quality }).toBuffer()
            : await pipeline.flatten({ background: '#ffffff' }).jpeg({ quality, mozjpeg: true }).toBuffer();
        smallest = Math.min(smallest, out.length);
        if (out.length <= maxBytes) return { ok: true, bytes: out, type: `image/${format}` };
      } catch {
        return { ok: false, reason: 'the image could not be re-encoded (its data is damaged)' };
      }
    }
    side = Math.floor(side * SHRINK);
  }
  return {
    ok: false,
    reason: `the image cannot be made to fit the limit of ${maxBytes} bytes (smallest re-encoding: ${Number.isFinite(smallest) ? smallest : bytes.length} bytes)`,
  };
}
