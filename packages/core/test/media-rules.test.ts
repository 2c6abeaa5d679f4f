import { describe, expect, it } from '@jest/globals';
import { findMediaViolations, NETWORK_MEDIA_RULES } from '../src/media-rules.js';
import { PLATFORMS } from '../src/platforms.js';

const images = (n: number) => ({
  images: Array.from({ length: n }, (_, i) => ({ url: `https://cdn.test/${i}.png` })),
  video: null,
});
const video = { images: [], video: { url: 'https://cdn.test/v.mp4' } };

describe('NETWORK_MEDIA_RULES', () => {
  it('has a rule for every platform and never more than 4 images', () => {
    for (const p of PLATFORMS) expect(NETWORK_MEDIA_RULES[p].maxImages).toBeLessThanOrEqual(4);
  });
});

describe('findMediaViolations', () => {
  it('text-only networks accept no media', () => {
    for (const p of [
      'twitter',
      'bluesky',
      'mastodon',
      'threads',
      'linkedin',
      'facebook',
      'discord',
    ] as const) {
      expect(findMediaViolations(p, null)).toBeNull();
      expect(findMediaViolations(p, images(0))).toBeNull();
    }
  });

  it('youtube needs a video and takes no images', () => {
    expect(findMediaViolations('youtube', null)).toBe('youtube needs a video');
    expect(findMediaViolations('youtube', images(1))).toBe('youtube needs a video');
    expect(findMediaViolations('youtube', video)).toBeNull();
  });

  it('instagram and tiktok need an image or a video', () => {
    expect(findMediaViolations('instagram', null)).toBe('instagram needs an image or a video');
    expect(findMediaViolations('tiktok', images(0))).toBe('tiktok needs an image or a video');
    expect(findMediaViolations('instagram', images(2))).toBeNull();
    expect(findMediaViolations('tiktok', video)).toBeNull();
  });

  it('caps images at 4', () => {
    expect(findMediaViolations('twitter', images(4))).toBeNull();
    expect(findMediaViolations('twitter', images(5))).toBe('twitter accepts at most 4 images, got 5');
  });

  it('rejects a video combined with images', () => {
    const both = { images: [{ url: 'https://cdn.test/a.png' }], video: { url: 'https://cdn.test/v.mp4' } };
    expect(findMediaViolations('twitter', both)).toBe('a video cannot be combined with images');
  });
});
