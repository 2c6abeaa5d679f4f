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

  it('reads MEDIA_SPOOL_MAX as bytes or with a unit, 8 GiB by default', () => {
    expect(loadEnv({}).MEDIA_SPOOL_MAX).toBe(8 * 1024 ** 3);
    expect(loadEnv({ MEDIA_SPOOL_MAX: '500MB' }).MEDIA_SPOOL_MAX).toBe(500_000_000);
    expect(loadEnv({ MEDIA_SPOOL_MAX: '2GiB' }).MEDIA_SPOOL_MAX).toBe(2 * 1024 ** 3);
    expect(loadEnv({ MEDIA_SPOOL_MAX: '1048576' }).MEDIA_SPOOL_MAX).toBe(1_048_576);
    expect(() => loadEnv({ MEDIA_SPOOL_MAX: 'lots' })).toThrow(/MEDIA_SPOOL_MAX/);
    expect(() => loadEnv({ MEDIA_SPOOL_MAX: '0' })).toThrow(/MEDIA_SPOOL_MAX/);
  });

  it('names the variable when a value is not understood', () => {
    expect(() => loadEnv({ MEDIA_ALLOW_PRIVATE_URLS: 'maybe' })).toThrow(/MEDIA_ALLOW_PRIVATE_URLS/);
  });
});

describe('publisher env: metrics collection', () => {
  it('defaults METRICS_COLLECT_AFTER to 1h,6h,24h,3d,7d,30d (contract)', () => {
    const h = 3_600_000;
    expect(loadEnv({}).METRICS_COLLECT_AFTER).toEqual([h, 6 * h, 24 * h, 72 * h, 168 * h, 720 * h]);
    expect(loadEnv({}).METRICS_CONCURRENCY).toBe(4);
  });

  it('reads take half of each documented rate limit by default; METRICS_READ_BUDGET replaces it per network', () => {
    expect(loadEnv({}).METRICS_READ_SHARE).toBe(0.5);
    expect(loadEnv({}).METRICS_READ_BUDGET).toEqual({});
    expect(
      loadEnv({ METRICS_READ_BUDGET: 'mastodon=100/5m, discord=3/2s:network' }).METRICS_READ_BUDGET,
    ).toEqual({
      mastodon: { limit: 100, windowMs: 300_000, per: 'account' },
      discord: { limit: 3, windowMs: 2000, per: 'network' },
    });
    expect(() => loadEnv({ METRICS_READ_BUDGET: 'telegram=1/1s' })).toThrow(/METRICS_READ_BUDGET/);
    expect(() => loadEnv({ METRICS_READ_BUDGET: 'mastodon=lots' })).toThrow(/METRICS_READ_BUDGET/);
    expect(() => loadEnv({ METRICS_READ_SHARE: '0' })).toThrow(/METRICS_READ_SHARE/);
  });

  it('one tenant takes half of a network-wide read cap by default (METRICS_TENANT_SHARE)', () => {
    expect(loadEnv({}).METRICS_TENANT_SHARE).toBe(0.5);
    expect(loadEnv({ METRICS_TENANT_SHARE: '1' }).METRICS_TENANT_SHARE).toBe(1);
    expect(() => loadEnv({ METRICS_TENANT_SHARE: '0' })).toThrow(/METRICS_TENANT_SHARE/);
    expect(() => loadEnv({ METRICS_TENANT_SHARE: '1.5' })).toThrow(/METRICS_TENANT_SHARE/);
  });

  it('sorts and deduplicates the durations', () => {
    expect(loadEnv({ METRICS_COLLECT_AFTER: '6h, 1h,1h' }).METRICS_COLLECT_AFTER).toEqual([
      3_600_000, 21_600_000,
    ]);
  });

  it('refuses what is not a list of durations, naming the variable', () => {
    for (const value of ['soon', '1h,,x', '500ms', '400d', ',']) {
      expect(() => loadEnv({ METRICS_COLLECT_AFTER: value })).toThrow(/METRICS_COLLECT_AFTER/);
    }
  });
});

describe('publisher env: fair lanes', () => {
  it('defaults to a quarter of the slots per network and 25 publishes per account at once', () => {
    const env = loadEnv({});
    expect(env.PUBLISH_NETWORK_SHARE).toBe(0.25);
    expect(env.PUBLISH_ACCOUNT_CONCURRENCY).toBe(25);
    expect(env.PUBLISH_LANE_LEASE).toBe(30_000);
    expect(env.PUBLISH_LANE_RETRY).toBe(200);
    expect(env.PUBLISH_LANE_WAIT).toBe(60_000);
  });

  it('refuses a share outside (0, 1] and a negative cap, naming the variable', () => {
    for (const value of ['0', '1.5', 'half']) {
      expect(() => loadEnv({ PUBLISH_NETWORK_SHARE: value })).toThrow(/PUBLISH_NETWORK_SHARE/);
    }
    expect(() => loadEnv({ PUBLISH_ACCOUNT_CONCURRENCY: '-1' })).toThrow(/PUBLISH_ACCOUNT_CONCURRENCY/);
    expect(loadEnv({ PUBLISH_ACCOUNT_CONCURRENCY: '0' }).PUBLISH_ACCOUNT_CONCURRENCY).toBe(0);
  });
});

describe('publisher env: media processing checks', () => {
  it("leaves the networks' own cadence unless PROCESSING_CHECK_EVERY / PROCESSING_MAX_WAIT are set", () => {
    expect(loadEnv({}).PROCESSING_CHECK_EVERY).toBeUndefined();
    expect(loadEnv({}).PROCESSING_MAX_WAIT).toBeUndefined();
    const env = loadEnv({ PROCESSING_CHECK_EVERY: '300ms', PROCESSING_MAX_WAIT: '2m' });
    expect(env.PROCESSING_CHECK_EVERY).toBe(300);
    expect(env.PROCESSING_MAX_WAIT).toBe(120_000);
    expect(() => loadEnv({ PROCESSING_CHECK_EVERY: 'soon' })).toThrow(/PROCESSING_CHECK_EVERY/);
  });
});
