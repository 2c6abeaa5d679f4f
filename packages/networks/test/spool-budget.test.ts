import { describe, expect, it } from '@jest/globals';
import { createSpoolBudget } from '../src/spool-budget.js';

describe('spool budget', () => {
  it('holds reserved bytes until released, and a release twice counts once', () => {
    const budget = createSpoolBudget({ maxBytes: 100 });
    const a = budget.reserve('acc-a', 40);
    if (!a.ok) throw new Error(a.refusal.message);
    expect(budget.held()).toBe(40);
    expect(budget.held('acc-a')).toBe(40);
    a.lease.release();
    a.lease.release();
    expect(budget.held()).toBe(0);
    expect(budget.held('acc-a')).toBe(0);
    expect(a.lease.bytes).toBe(0);
  });

  it('refuses a file larger than the whole budget as oversize, naming the setting', () => {
    const budget = createSpoolBudget({ maxBytes: 100, setting: 'MEDIA_SPOOL_MAX' });
    const big = budget.reserve('acc-a', 101);
    expect(big.ok).toBe(false);
    if (big.ok) return;
    expect(big.refusal.kind).toBe('oversize');
    expect(big.refusal.message).toMatch(/MEDIA_SPOOL_MAX = 100 bytes/);
    expect(budget.held()).toBe(0);
  });

  it('answers full while others hold the budget, and lets the file in once they release', () => {
    const budget = createSpoolBudget({ maxBytes: 100 });
    const first = budget.reserve('acc-a', 70);
    if (!first.ok) throw new Error(first.refusal.message);
    const second = budget.reserve('acc-b', 50);
    expect(second.ok ? null : second.refusal.kind).toBe('full');
    expect(budget.held()).toBe(70);
    first.lease.release();
    expect(budget.reserve('acc-b', 50).ok).toBe(true);
  });

  it('keeps one account to half the budget across its files, but lets a lone file take it all', () => {
    const budget = createSpoolBudget({ maxBytes: 100 });
    const lone = budget.reserve('acc-a', 90);
    if (!lone.ok) throw new Error(lone.refusal.message);
    lone.lease.release();
    const first = budget.reserve('acc-a', 40);
    if (!first.ok) throw new Error(first.refusal.message);
    const second = budget.reserve('acc-a', 20);
    expect(second.ok ? null : second.refusal.message).toMatch(/share/);
    // Another account still gets the rest.
    expect(budget.reserve('acc-b', 50).ok).toBe(true);
    expect(budget.reserve('acc-a', 10).ok).toBe(true);
  });

  it('grows a lease of unknown size as bytes arrive and stops it past the budget', () => {
    const budget = createSpoolBudget({ maxBytes: 100 });
    const other = budget.reserve('acc-b', 30);
    if (!other.ok) throw new Error(other.refusal.message);
    const growing = budget.reserve('acc-a', 0);
    if (!growing.ok) throw new Error(growing.refusal.message);
    expect(growing.lease.ensure(50)).toBeNull();
    expect(growing.lease.ensure(40)).toBeNull();
    expect(growing.lease.bytes).toBe(50);
    expect(growing.lease.ensure(80)?.kind).toBe('full');
    expect(growing.lease.bytes).toBe(50);
    expect(growing.lease.ensure(101)?.kind).toBe('oversize');
    expect(budget.held()).toBe(80);
    growing.lease.release();
    other.lease.release();
    expect(budget.held()).toBe(0);
  });
});
