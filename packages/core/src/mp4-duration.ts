/**
 * The duration of an ISO base media file (MP4, MOV) from its movie header (`moov` > `mvhd`: timescale
 * and duration, ISO/IEC 14496-12 §8.2.2), without decoding anything. Networks cap a video's length
 * (TikTok's `max_video_post_duration_sec`) and refuse a longer one only after the upload; reading the
 * header lets a connector refuse it first. Null when the bytes hold no readable header (WebM, a cut file).
 */
export function mp4DurationSeconds(bytes: Uint8Array): number | null {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const moov = findBox(view, 0, bytes.byteLength, 'moov');
  if (!moov) return null;
  const mvhd = findBox(view, moov.start, moov.end, 'mvhd');
  if (!mvhd || mvhd.end - mvhd.start < 20) return null;
  const version = view.getUint8(mvhd.start);
  const at = mvhd.start + 4 + (version === 1 ? 16 : 8);
  if (at + (version === 1 ? 12 : 8) > mvhd.end) return null;
  const timescale = view.getUint32(at);
  const duration = version === 1 ? Number(view.getBigUint64(at + 4)) : view.getUint32(at + 4);
  return timescale > 0 ? duration / timescale : null;
}

/**
 * A video's display width and height from the first track header (`moov` > `trak` > `tkhd`, ISO/IEC
 * 14496-12 §8.3.2: 16.16 fixed-point width and height at its end) that has a non-zero size; audio tracks
 * have zero. Null when there is none. At most 64 tracks are looked at.
 */
export function mp4VideoSize(bytes: Uint8Array): { width: number; height: number } | null {
  const track = firstSizedTrack(bytes);
  return track ? { width: track.width, height: track.height } : null;
}

/**
 * The size a player shows: `mp4VideoSize` with width and height swapped when the track header's matrix
 * turns the picture a quarter turn (phones record portrait video as landscape frames with a 90° or 270°
 * matrix, ISO/IEC 14496-12 §8.3.2 and §6.2.2: {a b u, c d v, x y w}, a rotation by 90° has a = d = 0).
 */
export function mp4DisplaySize(bytes: Uint8Array): { width: number; height: number } | null {
  const track = firstSizedTrack(bytes);
  if (!track) return null;
  return track.quarterTurn
    ? { width: track.height, height: track.width }
    : { width: track.width, height: track.height };
}

function firstSizedTrack(bytes: Uint8Array): { width: number; height: number; quarterTurn: boolean } | null {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const moov = findBox(view, 0, bytes.byteLength, 'moov');
  if (!moov) return null;
  let from = moov.start;
  for (let i = 0; i < 64; i += 1) {
    const trak = findBox(view, from, moov.end, 'trak');
    if (!trak) return null;
    const tkhd = findBox(view, trak.start, trak.end, 'tkhd');
    if (tkhd) {
      const version = view.getUint8(tkhd.start);
      const at = tkhd.start + (version === 1 ? 88 : 76);
      if (at + 8 <= tkhd.end) {
        const width = view.getUint32(at) >>> 16;
        const height = view.getUint32(at + 4) >>> 16;
        if (width > 0 && height > 0) {
          // The matrix's a, b (first row) precede width and height by 36 bytes.
          const matrix = at - 36;
          const a = Math.abs(view.getInt32(matrix));
          const b = Math.abs(view.getInt32(matrix + 4));
          return { width, height, quarterTurn: b > a };
        }
      }
    }
    from = trak.end;
  }
  return null;
}

/** Boxes are `size(4) type(4)`, size 1 = a 64-bit size follows, size 0 = to the end. Bounded by the buffer. */
function findBox(view: DataView, from: number, to: number, type: string) {
  let offset = from;
  // A box is at least 8 bytes, so the walk ends after at most (to - from) / 8 steps.
  while (offset + 8 <= to) {
    let size = view.getUint32(offset);
    let header = 8;
    if (size === 1) {
      if (offset + 16 > to) return null;
      size = Number(view.getBigUint64(offset + 8));
      header = 16;
    } else if (size === 0) {
      size = to - offset;
    }
    if (size < header) return null;
    const name = String.fromCharCode(
      view.getUint8(offset + 4),
      view.getUint8(offset + 5),
      view.getUint8(offset + 6),
      view.getUint8(offset + 7),
    );
    const end = Math.min(offset + size, to);
    if (name === type) return { start: offset + header, end };
    offset = end;
  }
  return null;
}

/** A minimal MP4 (`ftyp`, `moov` with an `mvhd` of the given length, `mdat` padding to `totalBytes`): for tests and simulators. */
export function fakeMp4(
  seconds: number,
  totalBytes = 64,
  size?: { width: number; height: number; quarterTurn?: boolean },
): Uint8Array {
  const ftyp = box('ftyp', new Uint8Array([...ascii('isom'), 0, 0, 2, 0, ...ascii('isomiso2')]));
  const mvhdBody = new Uint8Array(100);
  const mv = new DataView(mvhdBody.buffer);
  mv.setUint32(12, 1000); // timescale: milliseconds
  mv.setUint32(16, Math.round(seconds * 1000));
  const tracks: Uint8Array[] = [];
  if (size) {
    // An audio track first (zero size), then the video track: the reader must skip the first.
    for (const [w, h] of [
      [0, 0],
      [size.width, size.height],
    ] as const) {
      const tkhdBody = new Uint8Array(84);
      const tk = new DataView(tkhdBody.buffer);
      // The matrix (at 40): identity, or a 90° turn {0 1 0, -1 0 0, 0 0 1} (16.16 fixed point).
      const [a, b, c, d] = size.quarterTurn ? [0, 0x10000, -0x10000, 0] : [0x10000, 0, 0, 0x10000];
      tk.setInt32(40, a);
      tk.setInt32(44, b);
      tk.setInt32(52, c);
      tk.setInt32(56, d);
      tk.setInt32(72, 0x40000000);
      tk.setUint32(76, w * 65536);
      tk.setUint32(80, h * 65536);
      tracks.push(box('trak', box('tkhd', tkhdBody)));
    }
  }
  const moov = box('moov', concat([box('mvhd', mvhdBody), ...tracks]));
  const padding = Math.max(0, totalBytes - ftyp.length - moov.length - 8);
  const out = new Uint8Array(ftyp.length + moov.length + 8 + padding);
  out.set(ftyp, 0);
  out.set(moov, ftyp.length);
  out.set(box('mdat', new Uint8Array(padding)), ftyp.length + moov.length);
  return out;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

function ascii(text: string): number[] {
  return [...text].map((c) => c.charCodeAt(0));
}

function box(type: string, body: Uint8Array): Uint8Array {
  const out = new Uint8Array(8 + body.length);
  new DataView(out.buffer).setUint32(0, out.length);
  out.set(ascii(type), 4);
  out.set(body, 8);
  return out;
}
