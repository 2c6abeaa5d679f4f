import { parsePayload } from '@sps/queue';
import { type Job, UnrecoverableError } from 'bullmq';
import type { TPublisherContext } from './context.js';

/**
 * A refresh ahead of expiry. A transient failure throws, so BullMQ retries it with backoff; a refusal
 * has already disconnected the account (and queued the owner's e-mail) and is not retried.
 */
export async function processTokenRefresh(ctx: TPublisherContext, job: Job): Promise<{ status: string }> {
  const payload = parsePayload('tokenRefresh', job.data);
  if (!payload) throw new UnrecoverableError('Malformed token-refresh payload');
  const outcome = await ctx.tokens.refreshJob(payload.socialAccountId);
  if (outcome.ok) return { status: 'skipped' in outcome ? 'skipped' : 'refreshed' };
  if (outcome.reason === 'refused') return { status: 'disconnected' };
  throw new Error(`token refresh will be retried: ${outcome.message}`);
}
