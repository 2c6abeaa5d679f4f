import { describe, expect, it } from '@jest/globals';
import { fakeMp4, mp4DisplaySize, mp4DurationSeconds, mp4VideoSize } from '../src/mp4-duration.js';

describe('mp4DurationSeconds', () => {
  it('reads the movie header of an MP4', () => {
    expect(mp4DurationSeconds(fakeMp4(61.5))).toBe(61.5);
    expect(mp4DurationSeconds(fakeMp4(3, 4096))).toBe(3);
  });

  it('finds the header after the media data (moov at the end)', () => {
    const head = fakeMp4(12);
    // ftyp(24) + moov(116) + mdat(8): move the mdat before the moov.
    const ftyp = head.subarray(0, 24);
    const moov = head.subarray(24, 140);
    const mdat = new Uint8Array([0, 0, 0, 16, 0x6d, 0x64, 0x61, 0x74, 1, 2, 3, 4, 5, 6, 7, 8]);
    const reordered = new Uint8Array([...ftyp, ...mdat, ...moov]);
    expect(mp4DurationSeconds(reordered)).toBe(12);
  });

  it('answers null for bytes without a movie header', () => {
    expect(mp4DurationSeconds(new Uint8Array([0x1a, 0x45, 0xdf, 0xa3, 0, 0, 0, 0]))).toBeNull();
    expect(mp4DurationSeconds(fakeMp4(5).subarray(0, 40))).toBeNull();
    // A box claiming to be smaller than its header ends the walk instead of looping.
    expect(mp4DurationSeconds(new Uint8Array([0, 0, 0, 4, 0x6d, 0x6f, 0x6f, 0x76]))).toBeNull();
  });
});

describe('mp4VideoSize', () => {
  it('reads the first track header with a size (skipping an audio track of 0x0)', () => {
    expect(mp4VideoSize(fakeMp4(3, 64, { width: 1920, height: 1080 }))).toEqual({
      width: 1920,
      height: 1080,
    });
  });
  it('is null without tracks or without a moov box', () => {
    expect(mp4VideoSize(fakeMp4(3))).toBeNull();
    expect(mp4VideoSize(new Uint8Array(32))).toBeNull();
  });
});

describe('mp4DisplaySize', () => {
  it('swaps width and height when the track matrix turns the picture a quarter turn (portrait phone video)', () => {
    const turned = fakeMp4(3, 64, { width: 1920, height: 1080, quarterTurn: true });
    expect(mp4VideoSize(turned)).toEqual({ width: 1920, height: 1080 });
    expect(mp4DisplaySize(turned)).toEqual({ width: 1080, height: 1920 });
    expect(mp4DisplaySize(fakeMp4(3, 64, { width: 1920, height: 1080 }))).toEqual({
      width: 1920,
      height: 1080,
    });
    expect(mp4DisplaySize(fakeMp4(3))).toBeNull();
  });
});
