import { describe, expect, it } from '@jest/globals';
import { loadEnv } from '../src/env.js';

describe('publisher env: media downloads', () => {
  it('refuses private media addresses unless MEDIA_ALLOW_PRIVATE_URLS is true', () => {
    expect(loadEnv({}).MEDIA_ALLOW_PRIVATE_URLS).toBe(false);
    expect(loadEnv({ MEDIA_ALLOW_PRIVATE_URLS: 'false' }).MEDIA_ALLOW_PRIVATE_URLS).toBe(false);
    expect(loadEnv({ MEDIA_ALLOW_PRIVATE_URLS: 'true' }).MEDIA_ALLOW_PRIVATE_URLS).toBe(true);
  });

  it('parses the download bounds as durations', () => {
    const env = loadEnv({ MEDIA_DOWNLOAD_TIMEOUT: '10s', MEDIA_VIDEO_DOWNLOAD_TIMEOUT: '2m' });
    expect(env.MEDIA_DOWNLOAD_TIMEOUT).toBe(10_000);
    expect(env.MEDIA_VIDEO_DOWNLOAD_TIMEOUT).toBe(120_000);
    expect(loadEnv({}).MEDIA_DOWNLOAD_TIMEOUT).toBe(30_000);
  });

  it('names the variable when a value is not understood', () => {
    expect(() => loadEnv({ MEDIA_ALLOW_PRIVATE_URLS: 'maybe' })).toThrow(/MEDIA_ALLOW_PRIVATE_URLS/);
  });
});
