import { isValidDid } from '@atproto/syntax';
import { blueskyTextProblem } from './text-limits.sim.js';

/**
 * How a PDS judges an `app.bsky.feed.post` record before writing it: the lexicon's limits (300 graphemes,
 * facets with a DID for mentions, 4 images) and the blob constraints it checks when the record references
 * uploaded blobs. Messages follow the lexicon validator ("Record/text must not be longer than 300
 * graphemes") and the PDS's blob checks ("This file is too large. It is … but the maximum size is …").
 * https://github.com/bluesky-social/atproto/blob/main/lexicons/app/bsky/feed/post.json
 */

export interface TSimBlob {
  mimeType: string;
  size: number;
}

/** An XRPC error a record earns: status, `error` name and `message`. */
export interface TRecordProblem {
  status: number;
  error: string;
  message: string;
}

/**
 * Image blobs in a post: 1,000,000 bytes, as PDSes on the lexicon before the 2 MB change enforce it (the
 * connector fits images to that, which every PDS takes). Video: 100,000,000 likewise.
 */
export const SIM_IMAGE_BLOB_LIMIT = 1_000_000;
export const SIM_VIDEO_BLOB_LIMIT = 100_000_000;

/** `bytes.format` as the PDS prints sizes (1024-based, two decimals): 1000000 → 976.56KB. */
export function formatBytes(n: number): string {
  const units = ['B', 'KB', 'MB', 'GB'];
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const text = value.toFixed(2).replace(/\.?0+$/, '');
  return `${text}${units[unit]}`;
}

const invalid = (message: string): TRecordProblem => ({
  status: 400,
  error: 'InvalidRequest',
  message: `Invalid app.bsky.feed.post record: ${message}`,
});

interface TFacet {
  index?: { byteStart?: unknown; byteEnd?: unknown };
  features?: { $type?: unknown; did?: unknown; uri?: unknown; tag?: unknown }[];
}

function facetProblem(facets: unknown, text: string): TRecordProblem | null {
  if (facets === undefined) return null;
  if (!Array.isArray(facets)) return invalid('Record/facets must be an array');
  const bytes = Buffer.byteLength(text, 'utf8');
  for (const [i, raw] of facets.entries()) {
    const facet = raw as TFacet;
    const start = facet.index?.byteStart;
    const end = facet.index?.byteEnd;
    if (!Number.isInteger(start) || !Number.isInteger(end) || (start as number) < 0) {
      return invalid(`Record/facets/${i}/index must have integer byteStart and byteEnd of at least 0`);
    }
    // Modelled: facets must lie inside the text's UTF-8 bytes (apps drop ones that do not).
    if ((start as number) >= (end as number) || (end as number) > bytes) {
      return invalid(`Record/facets/${i}/index ${start}-${end} is outside the text's ${bytes} bytes`);
    }
    for (const [j, feature] of (facet.features ?? []).entries()) {
      const path = `Record/facets/${i}/features/${j}`;
      if (feature.$type === 'app.bsky.richtext.facet#mention' && !isValidDid(feature.did)) {
        return invalid(`${path}/did must be a valid did`);
      }
      if (feature.$type === 'app.bsky.richtext.facet#link') {
        try {
          new URL(String(feature.uri));
        } catch {
          return invalid(`${path}/uri must be a uri`);
        }
      }
    }
  }
  return null;
}

/**
 * app.bsky.embed.defs#aspectRatio: an object with integer `width` and `height`, both at least 1, worded as
 * the lexicon validator words it (`… must have the property "width"`, `… can not be less than 1`).
 * https://github.com/bluesky-social/atproto/blob/main/lexicons/app/bsky/embed/defs.json
 * https://github.com/bluesky-social/atproto/blob/main/packages/lexicon/src/validators/primitives.ts
 */
function aspectRatioProblem(value: unknown, path: string): TRecordProblem | null {
  if (value === undefined) return null;
  if (!value || typeof value !== 'object' || Array.isArray(value))
    return invalid(`${path} must be an object`);
  const ratio = value as Record<string, unknown>;
  for (const key of ['width', 'height']) {
    const n = ratio[key];
    if (n === undefined) return invalid(`${path} must have the property "${key}"`);
    if (typeof n !== 'number') return invalid(`${path}/${key} must be a number`);
    if (n < 1) return invalid(`${path}/${key} can not be less than 1`);
    if (!Number.isInteger(n)) return invalid(`${path}/${key} must be an integer`);
  }
  return null;
}

type TBlobRef = { ref?: { $link?: unknown }; mimeType?: unknown; size?: unknown } | undefined;

function blobProblem(
  ref: TBlobRef,
  blobs: Map<string, TSimBlob>,
  path: string,
  accept: (mime: string) => boolean,
  maxSize: number,
): TRecordProblem | null {
  const cid = String(ref?.ref?.$link ?? '');
  const found = blobs.get(cid);
  if (!found) return { status: 400, error: 'BlobNotFound', message: `Could not find blob: ${cid || path}` };
  if (found.size > maxSize) {
    return {
      status: 400,
      error: 'BlobTooLarge',
      message: `This file is too large. It is ${formatBytes(found.size)} but the maximum size is ${formatBytes(maxSize)}.`,
    };
  }
  if (ref?.mimeType !== found.mimeType) {
    return {
      status: 400,
      error: 'InvalidMimeType',
      message: `Referenced Mimetype does not match stored blob. Expected: ${found.mimeType}, Got: ${String(ref?.mimeType)}`,
    };
  }
  if (!accept(found.mimeType)) {
    return { status: 400, error: 'InvalidMimeType', message: `Wrong type of file. It is ${found.mimeType}.` };
  }
  return null;
}

function embedProblem(embed: unknown, blobs: Map<string, TSimBlob>): TRecordProblem | null {
  const e = embed as
    | { $type?: unknown; images?: unknown; video?: TBlobRef; aspectRatio?: unknown }
    | undefined;
  if (!e) return null;
  if (e.$type === 'app.bsky.embed.images') {
    if (!Array.isArray(e.images)) return invalid('Record/embed/images must be an array');
    if (e.images.length > 4) return invalid('Record/embed/images must not have more than 4 elements');
    const images = e.images as { image?: TBlobRef; alt?: unknown; aspectRatio?: unknown }[];
    for (const [i, image] of images.entries()) {
      if (typeof image.alt !== 'string') return invalid(`Record/embed/images/${i}/alt must be a string`);
      const ratio = aspectRatioProblem(image.aspectRatio, `Record/embed/images/${i}/aspectRatio`);
      if (ratio) return ratio;
      const problem = blobProblem(
        image.image,
        blobs,
        `embed/images/${i}`,
        (m) => m.startsWith('image/'),
        SIM_IMAGE_BLOB_LIMIT,
      );
      if (problem) return problem;
    }
  }
  if (e.$type === 'app.bsky.embed.video') {
    const ratio = aspectRatioProblem(e.aspectRatio, 'Record/embed/aspectRatio');
    if (ratio) return ratio;
    return blobProblem(e.video, blobs, 'embed/video', (m) => m === 'video/mp4', SIM_VIDEO_BLOB_LIMIT);
  }
  return null;
}

/** Why a PDS refuses this post record, or null. */
export function postRecordProblem(record: unknown, blobs: Map<string, TSimBlob>): TRecordProblem | null {
  const r = record as { text?: unknown; facets?: unknown; embed?: unknown; createdAt?: unknown };
  if (typeof r.text !== 'string') return invalid('Record/text must be a string');
  if (typeof r.createdAt !== 'string' || Number.isNaN(Date.parse(r.createdAt))) {
    return invalid('Record/createdAt must be an valid atproto datetime (both RFC-3339 and ISO-8601)');
  }
  const textProblem = blueskyTextProblem(r.text);
  if (textProblem) return invalid(textProblem);
  return facetProblem(r.facets, r.text) ?? embedProblem(r.embed, blobs);
}
