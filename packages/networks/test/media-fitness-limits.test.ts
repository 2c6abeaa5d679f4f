import { describe, expect, it } from '@jest/globals';
import { NETWORK_FILE_LIMITS } from '@sps/core';
import { BLUESKY_MAX_IMAGE_BYTES, BLUESKY_MAX_VIDEO_BYTES } from '../src/bluesky-media.js';
import { FACEBOOK_MAX_VIDEO_BYTES } from '../src/facebook-video.js';
import { LINKEDIN_MAX_IMAGE_BYTES, LINKEDIN_MAX_VIDEO_BYTES } from '../src/linkedin-media.js';
import { MASTODON_MAX_IMAGE_BYTES, MASTODON_MAX_VIDEO_BYTES } from '../src/mastodon-instance.js';
import { X_MAX_GIF_BYTES, X_MAX_IMAGE_BYTES, X_MAX_VIDEO_BYTES } from '../src/twitter-media.js';

// The dashboard's fitness check (core) warns with the caps the connectors hold files to: they must agree.
describe('NETWORK_FILE_LIMITS', () => {
  it('match the connectors’ exported caps', () => {
    expect(NETWORK_FILE_LIMITS.twitter).toMatchObject({
      imageBytes: X_MAX_IMAGE_BYTES,
      gifBytes: X_MAX_GIF_BYTES,
      videoBytes: X_MAX_VIDEO_BYTES,
    });
    expect(NETWORK_FILE_LIMITS.bluesky).toMatchObject({
      imageBytes: BLUESKY_MAX_IMAGE_BYTES,
      videoBytes: BLUESKY_MAX_VIDEO_BYTES,
    });
    expect(NETWORK_FILE_LIMITS.linkedin).toMatchObject({
      imageBytes: LINKEDIN_MAX_IMAGE_BYTES,
      videoBytes: LINKEDIN_MAX_VIDEO_BYTES,
    });
    expect(NETWORK_FILE_LIMITS.facebook.videoBytes).toBe(FACEBOOK_MAX_VIDEO_BYTES);
    expect(NETWORK_FILE_LIMITS.mastodon).toMatchObject({
      imageBytes: MASTODON_MAX_IMAGE_BYTES,
      videoBytes: MASTODON_MAX_VIDEO_BYTES,
    });
  });
});
