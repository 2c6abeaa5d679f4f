import { describe, expect, it } from '@jest/globals';
import { MAX_NETWORK_WAIT_MS, publishBackoff, RetryLaterError } from '../src/publish.processor.js';

describe('publishBackoff', () => {
  const backoff = publishBackoff(50);

  it("waits as long as a network asked, up to a day and an hour (YouTube's quota resets at midnight PT)", () => {
    const twentyHours = 20 * 3_600_000;
    expect(backoff(1, 'custom', new RetryLaterError('youtube: rate_limited', twentyHours))).toBe(twentyHours);
    expect(backoff(1, 'custom', new RetryLaterError('x', 30 * 3_600_000))).toBe(MAX_NETWORK_WAIT_MS);
    expect(MAX_NETWORK_WAIT_MS).toBe(25 * 3_600_000);
  });

  it('falls back to exponential delays capped at 5 minutes when no wait was asked', () => {
    expect(backoff(1, 'custom', new RetryLaterError('x', undefined))).toBe(50);
    expect(backoff(3, 'custom', new Error('x'))).toBe(200);
    expect(backoff(30, 'custom', new Error('x'))).toBe(5 * 60_000);
  });
});
