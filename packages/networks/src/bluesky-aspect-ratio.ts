import { mp4DisplaySize } from '@sps/core';
import { mp4MoovOf, type TMediaFile } from './chunked-upload.js';

/**
 * app.bsky.embed.defs#aspectRatio: `{ width, height }`, both integers of at least 1 ("width:height
 * represents an aspect ratio. It may be approximate"). Optional on an image (app.bsky.embed.images#image)
 * and on a video (app.bsky.embed.video); apps size the frame from it before the media loads, so a post
 * without one jumps in the feed, and a video without one is shown in a default frame until it plays.
 * https://github.com/bluesky-social/atproto/blob/main/lexicons/app/bsky/embed/defs.json
 * https://github.com/bluesky-social/atproto/blob/main/lexicons/app/bsky/embed/video.json
 */
export interface TAspectRatio {
  width: number;
  height: number;
}

const valid = (width: unknown, height: unknown): width is number =>
  Number.isInteger(width) && Number.isInteger(height) && (width as number) >= 1 && (height as number) >= 1;

// libvips loads on the first image, not in every process that imports @sps/networks.
const loadSharp = async () => (await import('sharp')).default;

/** An image's shown size (EXIF orientation applied) from its header, or undefined when sharp cannot read it. */
export async function imageAspectRatio(bytes: Buffer): Promise<TAspectRatio | undefined> {
  try {
    const sharp = await loadSharp();
    const meta = await sharp(bytes, { limitInputPixels: 50_000_000 }).metadata();
    const width = meta.autoOrient?.width ?? meta.width;
    const height = meta.autoOrient?.height ?? meta.height;
    return valid(width, height) ? { width, height: height as number } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A video's shown size from its MP4/MOV header alone: the `moov` box is found by walking the top-level
 * box headers of the spooled file (the media data is skipped, never read), then its first sized track
 * header, turned when its matrix says so. WebM, or a header over the cap, gives none: the embed then goes
 * without one, as before.
 */
export async function videoAspectRatio(file: TMediaFile): Promise<TAspectRatio | undefined> {
  if (file.type === 'video/webm') return undefined;
  const moov = await mp4MoovOf(file).catch(() => null);
  const size = moov ? mp4DisplaySize(moov) : null;
  return size && valid(size.width, size.height) ? size : undefined;
}

/** The ratio kept in a segment's progress (string values) while the video service processes the video. */
export const aspectRatioText = (ratio: TAspectRatio) => `${ratio.width}:${ratio.height}`;

export function aspectRatioFromText(text: string | undefined): TAspectRatio | undefined {
  const [width, height] = (text ?? '').split(':').map(Number);
  return valid(width, height) ? { width: width as number, height: height as number } : undefined;
}
