import { describe, expect, it } from '@jest/globals';
import { AppError } from '../src/app-error.js';
import {
  findMediaProblems,
  findMediaViolations,
  mediaProblemField,
  NETWORK_MEDIA_RULES,
  type TMediaShape,
} from '../src/media-rules.js';
import { PLATFORMS } from '../src/platforms.js';
import { assertMediaFits, findPublishProblems } from '../src/publish-checks.js';

const images = (n: number) => ({
  images: Array.from({ length: n }, (_, i) => ({ url: `https://cdn.test/${i}.jpg` })),
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

const urls = (...list: string[]): TMediaShape => ({ images: list.map((url) => ({ url })), video: null });

describe('image and video types by URL extension', () => {
  it('instagram takes only JPEG; threads JPEG and PNG; tiktok photos JPEG and WebP', () => {
    expect(findMediaViolations('instagram', urls('https://cdn.test/a.png'))).toBe(
      'instagram does not accept .png images (it takes jpg, jpeg)',
    );
    expect(findMediaViolations('instagram', urls('https://cdn.test/a.JPG'))).toBeNull();
    expect(findMediaViolations('threads', urls('https://cdn.test/a.png'))).toBeNull();
    expect(findMediaViolations('threads', urls('https://cdn.test/a.webp'))).toContain('.webp');
    expect(findMediaViolations('tiktok', urls('https://cdn.test/a.webp'))).toBeNull();
    expect(findMediaViolations('tiktok', urls('https://cdn.test/a.png'))).toContain(
      'tiktok does not accept .png',
    );
  });

  it('leaves URLs without a known extension to the download check', () => {
    expect(findMediaViolations('instagram', urls('https://cdn.test/image?id=3'))).toBeNull();
    expect(findMediaViolations('instagram', urls('https://cdn.test/photo.php'))).toBeNull();
  });

  it('checks video types where the network names them', () => {
    const webm = { images: [], video: { url: 'https://cdn.test/v.webm' } };
    expect(findMediaViolations('twitter', webm)).toBe(
      'twitter does not accept .webm videos (it takes mp4, mov)',
    );
    expect(findMediaViolations('tiktok', webm)).toBeNull();
    // Facebook's Resumable Upload API takes video/mp4 only.
    const mov = { images: [], video: { url: 'https://cdn.test/v.mov' } };
    expect(findMediaViolations('facebook', mov)).toBe('facebook does not accept .mov videos (it takes mp4)');
  });

  it('X takes an animated GIF only alone', () => {
    expect(findMediaViolations('twitter', urls('https://cdn.test/a.gif'))).toBeNull();
    const problems = findMediaProblems(['twitter'], {
      media: urls('https://cdn.test/a.jpg', 'https://cdn.test/b.gif'),
    });
    expect(problems).toEqual([
      expect.objectContaining({
        item: { kind: 'image', index: 1 },
        message: expect.stringContaining('animated GIF'),
      }),
    ]);
    expect(
      findMediaViolations('bluesky', urls('https://cdn.test/a.jpg', 'https://cdn.test/b.gif')),
    ).toBeNull();
  });
});

describe('mediaProblemField names the item in each variant', () => {
  const post = {
    media: urls('https://cdn.test/0.jpg', 'https://cdn.test/1.jpg', 'https://cdn.test/2.png'),
    segments: [{ media: null }, { media: { images: [], video: { url: 'https://cdn.test/v.webm' } } }],
  };
  const problems = findMediaProblems(['instagram', 'twitter'], post);

  it('B: media.images.N, media.video, segments.N.media_urls.M', () => {
    expect(problems.map((p) => `${p.platform} ${mediaProblemField(p, 'B')}`)).toEqual([
      'instagram media.images.2',
      'instagram segments.0.media_urls',
      'instagram segments.1.media_urls.0',
      'twitter segments.1.media_urls.0',
    ]);
    const video = findMediaProblems(['linkedin'], {
      media: { images: [], video: { url: 'https://cdn.test/v.mov' } },
    });
    expect(video.map((p) => mediaProblemField(p, 'B'))).toEqual(['media.video']);
    expect(
      findMediaProblems(['bluesky'], { media: { images: [], video: { url: 'https://cdn.test/v.mov' } } }),
    ).toEqual([]);
    // Bluesky's video service takes .mpeg, but the media fetcher cannot recognise it: refused up front.
    expect(findMediaViolations('bluesky', { images: [], video: { url: 'https://cdn.test/v.mpeg' } })).toMatch(
      /does not accept \.mpeg videos/,
    );
  });

  it('A: mediaUrls.N and segments.N.mediaUrls.M', () => {
    expect(problems.map((p) => mediaProblemField(p, 'A'))).toEqual([
      'mediaUrls.2',
      'segments.0.mediaUrls',
      'segments.1.mediaUrls.0',
      'segments.1.mediaUrls.0',
    ]);
  });

  it('points at the first image over the count', () => {
    const five = findMediaProblems(['twitter'], {
      media: { images: [1, 2, 3, 4, 5].map((i) => ({ url: `https://c.test/${i}.jpg` })), video: null },
    });
    expect(mediaProblemField(five[0]!, 'B')).toBe('media.images.4');
  });
});

describe('assertMediaFits (create/update)', () => {
  const youtubeDraft = { platforms: ['youtube' as const], media: null, segments: null };

  it('lets a draft lack media a network needs, but not a post that will publish without another check', () => {
    expect(() => assertMediaFits(youtubeDraft, 'B', { draft: true })).not.toThrow();
    try {
      assertMediaFits(youtubeDraft, 'B', { draft: false });
      throw new Error('expected a refusal');
    } catch (err) {
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).code).toBe('media_not_supported');
      expect((err as AppError).issues).toEqual([{ field: 'media', message: 'youtube needs a video' }]);
    }
  });

  it('refuses media a network cannot take even in a draft, naming every item', () => {
    const post = {
      platforms: ['instagram' as const, 'twitter' as const],
      media: { images: [], video: { url: 'https://cdn.test/v.webm' } },
      segments: null,
    };
    try {
      assertMediaFits(post, 'A', { draft: true });
      throw new Error('expected a refusal');
    } catch (err) {
      expect((err as AppError).issues).toEqual([
        { field: 'mediaUrls.0', message: 'instagram does not accept .webm videos (it takes mp4, mov)' },
        { field: 'mediaUrls.0', message: 'twitter does not accept .webm videos (it takes mp4, mov)' },
      ]);
      expect((err as AppError).message).toBe(
        'mediaUrls.0: instagram does not accept .webm videos (it takes mp4, mov)',
      );
    }
  });

  it('publish checks name the same fields', () => {
    const problems = findPublishProblems(
      { content: 'x', platforms: ['tiktok'], media: urls('https://cdn.test/a.png'), segments: null },
      new Set(['tiktok']),
      'A',
    );
    expect(problems.media).toEqual([
      {
        platform: 'tiktok',
        field: 'mediaUrls.0',
        message: 'tiktok does not accept .png images (it takes jpg, jpeg, webp)',
      },
    ]);
  });
});
