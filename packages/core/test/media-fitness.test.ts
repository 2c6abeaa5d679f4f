import { describe, expect, it } from '@jest/globals';
import { mediaFitness, NETWORK_FILE_LIMITS, type TFitnessItem } from '../src/media-fitness.js';
import { PLATFORMS } from '../src/platforms.js';

const MB = 1024 * 1024;
const jpg = (sizeBytes = 200_000, n = 0): TFitnessItem => ({
  url: `https://sps.test/media/0000000${n}-0000-4000-8000-000000000000.jpg`,
  type: 'image',
  sizeBytes,
  durationS: null,
});
const png: TFitnessItem = { ...jpg(), url: 'https://sps.test/media/a.png' };
const gif = (sizeBytes: number): TFitnessItem => ({
  ...jpg(sizeBytes),
  url: 'https://sps.test/media/g.gif',
  type: 'gif',
});
const mp4 = (sizeBytes: number, durationS: number | null): TFitnessItem => ({
  url: 'https://sps.test/media/v.mp4',
  type: 'video',
  sizeBytes,
  durationS,
});

describe('mediaFitness', () => {
  it('has file limits for every network', () => {
    for (const p of PLATFORMS) expect(NETWORK_FILE_LIMITS[p]).toBeDefined();
  });

  it('passes a small JPEG everywhere images are taken', () => {
    const [x, bsky] = mediaFitness(['twitter', 'bluesky'], [jpg()]);
    expect(x).toEqual({ platform: 'twitter', post: [], items: [[]], fits: true });
    expect(bsky?.fits).toBe(true);
  });

  it('refuses a PNG for TikTok photos and Instagram, by the same rule post creation uses', () => {
    const [tiktok, instagram] = mediaFitness(['tiktok', 'instagram'], [png]);
    expect(tiktok?.fits).toBe(false);
    expect(tiktok?.items[0]?.[0]?.message).toMatch(/tiktok does not accept \.png images/);
    expect(instagram?.items[0]?.[0]?.level).toBe('error');
  });

  it('warns that an image over X’s 5 MB is re-encoded, and refuses it where the network fetches it itself', () => {
    const [x, threads] = mediaFitness(['twitter', 'threads'], [jpg(9 * MB)]);
    expect(x?.fits).toBe(true);
    expect(x?.items[0]).toEqual([{ level: 'warning', message: expect.stringMatching(/re-encoded/) }]);
    expect(threads?.fits).toBe(false);
  });

  it('refuses a GIF over X’s 15 MB and a video over its 512 MB; a long video is a warning on X', () => {
    expect(mediaFitness(['twitter'], [gif(16 * MB)])[0]?.fits).toBe(false);
    const [big] = mediaFitness(['twitter'], [mp4(600 * MB, 30)]);
    expect(big?.items[0]?.[0]?.message).toMatch(/too large for twitter: 600 MB/);
    const [long] = mediaFitness(['twitter'], [mp4(10 * MB, 200)]);
    expect(long?.fits).toBe(true);
    expect(long?.items[0]?.[0]?.level).toBe('warning');
    const [bsky] = mediaFitness(['bluesky'], [mp4(10 * MB, 200)]);
    expect(bsky?.fits).toBe(false);
  });

  it('names too many images on the post, and a video with images on the video', () => {
    const five = [0, 1, 2, 3, 4].map((n) => jpg(1000, n));
    const [x] = mediaFitness(['twitter'], five);
    expect(x?.post[0]?.message).toMatch(/at most 4 images/);
    const [mixed] = mediaFitness(['mastodon'], [jpg(), mp4(MB, 5)]);
    expect(mixed?.items[1]?.[0]?.message).toMatch(/cannot be combined/);
    expect(mediaFitness(['mastodon'], [mp4(MB, 5), mp4(MB, 5)])[0]?.post[0]?.message).toMatch(/one video/);
  });

  it('counts media given by URL (size unknown) with the uploads', () => {
    const byUrl: TFitnessItem = {
      url: 'https://cdn.test/a.png',
      type: 'image',
      sizeBytes: null,
      durationS: null,
    };
    const [x, tiktok] = mediaFitness(['twitter', 'tiktok'], [byUrl, byUrl, byUrl, jpg(), jpg()]);
    expect(x?.post[0]?.message).toMatch(/at most 4 images, got 5/);
    expect(tiktok?.items[0]?.[0]?.message).toMatch(/\.png/);
  });

  it('says YouTube needs a video, except on a draft without media', () => {
    expect(mediaFitness(['youtube'], [jpg()])[0]?.fits).toBe(false);
    expect(mediaFitness(['youtube'], [])[0]?.fits).toBe(false);
    expect(mediaFitness(['youtube'], [], { draft: true })[0]?.fits).toBe(true);
  });
});
