import type { Plan } from './generated/prisma/enums.js';

export type TPlan = Plan;
export const PLANS = ['none', 'free', 'starter', 'pro'] as const satisfies readonly TPlan[];
