import { AppError } from '@sps/core';
import type { TAuth } from '../http/auth.js';

/** Variant A: creating and publishing need an active plan (the trial checkout finished). */
export function requireActivePlan(auth: TAuth): void {
  if (auth.plan === 'none') {
    throw new AppError('plan_required', 'This account has no active plan', {
      fix: 'Finish the trial checkout in the dashboard to activate a plan, then retry.',
      details: { plan: auth.plan },
    });
  }
}
