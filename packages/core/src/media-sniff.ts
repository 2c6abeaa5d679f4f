/**
 * What the bytes of a download are, by their magic numbers: a URL's extension and a server's
 * Content-Type are claims, the first bytes are what a network will actually parse.
 * Signatures: JPEG (FF D8 FF), PNG (89 50 4E 47), GIF (GIF87a/GIF89a), WebP (RIFF....WEBP),
 * ISO base media (`ftyp` box at offset 4: MP4, MOV, HEIC/AVIF by brand), WebM/Matroska (EBML 1A 45 DF A3).
 */
export type TMediaKind = 'image' | 'video';

export interface TSniffed {
  type: string;
  kind: TMediaKind;
}

/** Enough bytes for every signature above. */
export const SNIFF_BYTES = 16;

const IMAGE_FTYP_BRANDS: Record<string, string> = {
  heic: 'image/heic',
  heix: 'image/heic',
  heim: 'image/heic',
  heis: 'image/heic',
  mif1: 'image/heif',
  msf1: 'image/heif',
  avif: 'image/avif',
  avis: 'image/avif',
};

function ascii(bytes: Buffer, start: number, end: number): string {
  return bytes.subarray(start, end).toString('latin1');
}

export function sniffMedia(bytes: Buffer): TSniffed | null {
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) {
    return { type: 'image/jpeg', kind: 'image' };
  }
  // The first four of PNG's eight signature bytes (0x89 "PNG") already rule out text and HTML.
  if (bytes.length >= 4 && bytes[0] === 0x89 && ascii(bytes, 1, 4) === 'PNG') {
    return { type: 'image/png', kind: 'image' };
  }
  if (bytes.length >= 6 && (ascii(bytes, 0, 6) === 'GIF87a' || ascii(bytes, 0, 6) === 'GIF89a')) {
    return { type: 'image/gif', kind: 'image' };
  }
  if (bytes.length >= 12 && ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 12) === 'WEBP') {
    return { type: 'image/webp', kind: 'image' };
  }
  if (bytes.length >= 12 && ascii(bytes, 4, 8) === 'ftyp') {
    const brand = ascii(bytes, 8, 12);
    const imageType = IMAGE_FTYP_BRANDS[brand];
    if (imageType) return { type: imageType, kind: 'image' };
    return { type: brand === 'qt  ' ? 'video/quicktime' : 'video/mp4', kind: 'video' };
  }
  if (bytes.length >= 4 && bytes[0] === 0x1a && bytes[1] === 0x45 && bytes[2] === 0xdf && bytes[3] === 0xa3) {
    return { type: 'video/webm', kind: 'video' };
  }
  return null;
}

/** Content-Types that say nothing about the bytes; anything else must agree with the kind asked for. */
const NEUTRAL_TYPES = new Set(['', 'application/octet-stream', 'binary/octet-stream']);

export function declaredType(header: string | undefined): string {
  return (header ?? '').split(';')[0]!.trim().toLowerCase();
}

/**
 * Why a download is not the media asked for, or null when it is: the bytes must be a known image or
 * video of the requested kind, and a declared Content-Type (when it is not a neutral one) must be of
 * that kind too, so an HTML page served as `image/jpeg` or a JPEG served as `text/html` is refused.
 */
export function mediaTypeProblem(
  kind: TMediaKind,
  declared: string,
  sniffed: TSniffed | null,
): string | null {
  if (!NEUTRAL_TYPES.has(declared) && !declared.startsWith(`${kind}/`)) {
    return `the file is not ${kind === 'image' ? 'an image' : 'a video'} (its server says it is ${declared.slice(0, 60)})`;
  }
  if (!sniffed) {
    return `the file is not ${kind === 'image' ? 'an image' : 'a video'} in a supported format (JPEG, PNG, GIF, WebP, MP4, MOV or WebM)`;
  }
  if (sniffed.kind !== kind) {
    return `the file is ${sniffed.kind === 'image' ? 'an image' : 'a video'} (${sniffed.type}), not ${kind === 'image' ? 'an image' : 'a video'}`;
  }
  return null;
}
