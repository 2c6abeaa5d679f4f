import { secretBox } from '@sps/core';
import type { TDeactivation } from '@sps/db';
import { assertDeliverableUrl } from '@sps/networks';
import { parsePayload } from '@sps/queue';
import { type Job, type MinimalJob, UnrecoverableError } from 'bullmq';
import type { Logger } from 'pino';
import type { TWebhooksContext } from './context.js';
import { signatureHeaders } from './signature.js';

const MAX_ERROR = 500;

interface TAttempt {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
}

function describe(error: unknown): string {
  const e = error as { name?: string; code?: string; message?: string };
  const text =
    e.name === 'TimeoutError'
      ? `timeout: ${e.message ?? ''}`
      : `${e.code ?? e.name ?? 'error'}: ${e.message ?? ''}`;
  return text.slice(0, MAX_ERROR);
}

type TLoaded = NonNullable<Awaited<ReturnType<TWebhooksContext['deliveries']['loadForAttempt']>>>;

/** The envelope, serialised once: this exact string is signed and sent. */
export function envelopeBody(event: TLoaded['event']): string {
  return JSON.stringify({
    id: event.id,
    type: event.type,
    created_at: event.createdAt.toISOString(),
    data: event.data,
  });
}

async function attempt(ctx: TWebhooksContext, loaded: TLoaded): Promise<TAttempt> {
  try {
    const url = new URL(loaded.webhook.url);
    assertDeliverableUrl(url, ctx.options.allowPrivateUrls);
    const secret = secretBox.open(loaded.webhook.secretEncrypted, ctx.options.encryptionKey);
    const body = envelopeBody(loaded.event);
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'social-post-service-webhooks/1.0',
      ...signatureHeaders(secret, loaded.event.id, body, Math.floor(Date.now() / 1000)),
    };
    const response = await ctx.http(url, { body, headers });
    const ok = response.statusCode >= 200 && response.statusCode < 300;
    return { ok, statusCode: response.statusCode, error: ok ? null : `HTTP ${response.statusCode}` };
  } catch (error) {
    return { ok: false, statusCode: null, error: describe(error) };
  }
}

async function notifyOwner(ctx: TWebhooksContext, log: Logger, off: TDeactivation): Promise<void> {
  log.warn(
    { webhookId: off.webhookId, accountId: off.accountId, failures: off.consecutiveFailures },
    'webhook deactivated',
  );
  if (!off.ownerEmail) return;
  try {
    await ctx.mailer.send({
      to: off.ownerEmail,
      subject: 'Your webhook was deactivated',
      text: [
        `Your webhook ${off.webhookId} (${off.url}) was deactivated after ${off.consecutiveFailures} consecutive failed deliveries.`,
        'It receives no events until you re-activate it:',
        `PUT /v1/webhooks/${off.webhookId} with {"is_active": true}`,
        `Delivery history: GET /v1/webhooks/${off.webhookId}/deliveries`,
      ].join('\n'),
    });
  } catch (error) {
    log.error({ webhookId: off.webhookId, err: (error as Error).message }, 'could not e-mail the owner');
  }
}

/**
 * One attempt of one delivery. PostgreSQL says what to send and whether it is still open; the outcome is
 * written before the job settles, so a crash before that only repeats the attempt (same event id).
 */
export async function processDelivery(ctx: TWebhooksContext, job: Job): Promise<string> {
  const payload = parsePayload('webhookDelivery', job.data);
  if (!payload) throw new UnrecoverableError('Malformed delivery payload');
  const loaded = await ctx.deliveries.loadForAttempt(payload.deliveryId);
  if (!loaded) return 'gone';
  if (loaded.status !== 'pending' && loaded.status !== 'retrying') return loaded.status;
  const { options } = ctx;
  if (!loaded.webhook.isActive) {
    // A deactivated webhook receives nothing; this delivery ends without counting as a new failure.
    await ctx.deliveries.recordFailure(
      loaded.id,
      loaded.webhookId,
      { statusCode: null, error: 'webhook is not active' },
      { threshold: options.deactivateAfter, countsTowardDeactivation: false, incrementAttempts: false },
    );
    return 'inactive';
  }

  const number = loaded.attempts + 1;
  const result = await attempt(ctx, loaded);
  // Ids only: the receiver URL (it may carry a token), the secret and the payload never reach the logs.
  const log = ctx.logger.child({
    jobId: job.id,
    deliveryId: loaded.id,
    webhookId: loaded.webhookId,
    eventId: loaded.eventId,
    attempt: number,
  });
  if (result.ok && result.statusCode !== null) {
    await ctx.deliveries.recordSuccess(loaded.id, loaded.webhookId, result.statusCode);
    ctx.metrics.deliveryAttempt('delivered', number);
    log.debug({ statusCode: result.statusCode }, 'delivered');
    return 'succeeded';
  }

  const maxAttempts = options.retryDelaysMs.length + 1;
  const bullAttemptsLeft = job.attemptsMade + 1 < (job.opts.attempts ?? 1);
  if (number >= maxAttempts || !bullAttemptsLeft) {
    const { deactivation } = await ctx.deliveries.recordFailure(loaded.id, loaded.webhookId, result, {
      threshold: options.deactivateAfter,
      countsTowardDeactivation: true,
    });
    ctx.metrics.deliveryAttempt('gave_up', number);
    log.warn({ statusCode: result.statusCode }, 'delivery failed, no attempts left');
    if (deactivation) await notifyOwner(ctx, log, deactivation);
    throw new UnrecoverableError(`delivery failed after ${number} attempts`);
  }
  const delay = options.retryDelaysMs[Math.min(number - 1, options.retryDelaysMs.length - 1)] ?? 0;
  if (job.id) ctx.nextDelays.set(job.id, delay);
  await ctx.deliveries.recordRetry(loaded.id, result, new Date(Date.now() + delay));
  ctx.metrics.deliveryAttempt('failed_attempt', number);
  log.info({ statusCode: result.statusCode, retryInMs: delay }, 'delivery attempt failed');
  throw new Error(`attempt ${number} failed: ${result.error ?? 'unknown'}`);
}

/** BullMQ `settings.backoffStrategy`: the delay the processor chose, else the schedule by `attemptsMade` (1 on the first retry). */
export function deliveryBackoff(ctx: TWebhooksContext) {
  return (attemptsMade: number, _type?: string, _err?: Error, job?: MinimalJob): number => {
    const chosen = job?.id ? ctx.nextDelays.get(job.id) : undefined;
    if (job?.id) ctx.nextDelays.delete(job.id);
    const delays = ctx.options.retryDelaysMs;
    return chosen ?? delays[Math.min(Math.max(attemptsMade - 1, 0), delays.length - 1)] ?? 0;
  };
}
