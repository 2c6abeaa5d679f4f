import { describe, expect, it } from '@jest/globals';
import {
  canApprove,
  canPublish,
  canUpdate,
  isPostStatus,
  POST_STATUSES,
  resolvePostOutcome,
  statusAfterUnschedule,
  statusOnCreate,
  type TPostStatus,
} from '../src/post-state.js';

const allowed = (fn: (s: TPostStatus) => boolean): TPostStatus[] => POST_STATUSES.filter(fn);

describe('post state guards', () => {
  it('canUpdate: draft, scheduled and failed (a failed post becomes a draft again)', () => {
    expect(allowed(canUpdate)).toEqual(['draft', 'scheduled', 'failed']);
  });

  it('canPublish: draft and scheduled only (failed goes through retry)', () => {
    expect(allowed(canPublish)).toEqual(['draft', 'scheduled']);
    expect(canPublish('failed')).toBe(false);
  });

  it('canApprove: pending drafts only', () => {
    expect(canApprove('draft', 'pending')).toBe(true);
    expect(canApprove('draft', 'queued')).toBe(false);
    expect(canApprove('draft', null)).toBe(false);
    expect(canApprove('published', 'pending')).toBe(false);
    expect(canApprove('scheduled', 'pending')).toBe(false);
  });

  it('isPostStatus', () => {
    expect(isPostStatus('draft')).toBe(true);
    expect(isPostStatus('queued')).toBe(false);
  });
});

describe('resolvePostOutcome', () => {
  it('is publishing while any target is pending or publishing', () => {
    expect(resolvePostOutcome(['succeeded', 'pending'])).toBe('publishing');
    expect(resolvePostOutcome(['failed', 'publishing'])).toBe('publishing');
  });

  it('is published when at least one target succeeded', () => {
    expect(resolvePostOutcome(['succeeded', 'failed', 'unknown'])).toBe('published');
    expect(resolvePostOutcome(['succeeded'])).toBe('published');
  });

  it('is failed when all finished and none succeeded, unknown included', () => {
    expect(resolvePostOutcome(['failed', 'failed'])).toBe('failed');
    expect(resolvePostOutcome(['unknown'])).toBe('failed');
    expect(resolvePostOutcome(['failed', 'unknown'])).toBe('failed');
  });
});

describe('status on create / unschedule', () => {
  it('scheduled only when scheduledFor is given', () => {
    expect(statusOnCreate({ scheduledFor: new Date('2030-01-01T00:00:00Z'), queueState: null })).toBe(
      'scheduled',
    );
    expect(statusOnCreate({ scheduledFor: '2030-01-01T00:00:00Z' })).toBe('scheduled');
    expect(statusOnCreate({ scheduledFor: null, queueState: null })).toBe('draft');
    expect(statusOnCreate({ queueState: 'queued' })).toBe('draft');
    expect(statusOnCreate({ queueState: 'pending' })).toBe('draft');
  });

  it('unscheduling makes a draft', () => {
    expect(statusAfterUnschedule()).toBe('draft');
  });
});
