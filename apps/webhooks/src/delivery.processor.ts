import { secretBox } from '@sps/core';
import type { TDeactivation } from '@sps/db';
import { parsePayload, webhookOfDeliveryJob } from '@sps/queue';
import { assertDeliverableUrl } from '@sps/safe-fetch';
import { DelayedError, type Job, type MinimalJob, UnrecoverableError } from 'bullmq';
import type { Logger } from 'pino';
import type { TWebhooksContext } from './context.js';
import { signatureHeaders } from './signature.js';

const MAX_ERROR = 500;
/** The most of a receiver's answer that is read; the rest is never downloaded. */
export const RESPONSE_READ_LIMIT = 4096;
/** The part of a failed answer's body kept with the delivery (last_error), after the status. */
const EXCERPT_CHARS = 200;

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

/**
 * POSTs and reads at most RESPONSE_READ_LIMIT bytes of the answer, then drops the connection: a receiver
 * cannot make the worker download (or, as the body is never decompressed, inflate) more than that.
 */
function post(
  ctx: TWebhooksContext,
  url: URL,
  body: string,
  headers: Record<string, string>,
): Promise<{ statusCode: number; head: Buffer; encoding: string | undefined }> {
  return new Promise((resolve, reject) => {
    const stream = ctx.http.stream(url, { body, headers });
    const chunks: Buffer[] = [];
    let size = 0;
    let statusCode = 0;
    let encoding: string | undefined;
    let settled = false;
    const finish = () => {
      if (settled) return;
      settled = true;
      stream.destroy();
      resolve({ statusCode, head: Buffer.concat(chunks).subarray(0, RESPONSE_READ_LIMIT), encoding });
    };
    stream.on('response', (response: { statusCode: number; headers: Record<string, string | undefined> }) => {
      statusCode = response.statusCode;
      encoding = response.headers['content-encoding'];
    });
    stream.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= RESPONSE_READ_LIMIT) finish();
    });
    stream.on('end', finish);
    stream.on('error', (error) => {
      if (settled) return;
      settled = true;
      reject(error);
    });
  });
}

/** `HTTP 500: <start of the body>` with control characters flattened; compressed bodies are not shown. */
function failureText(statusCode: number, head: Buffer, encoding: string | undefined): string {
  const status = `HTTP ${statusCode}`;
  if (encoding && encoding !== 'identity') return `${status} (${encoding}-encoded body not read)`;
  const text = head
    .toString('utf8')
    .replace(/[\p{Cc}\ufffd]+/gu, ' ')
    .trim();
  if (!text) return status;
  return `${status}: ${text.length > EXCERPT_CHARS ? `${text.slice(0, EXCERPT_CHARS)}…` : text}`;
}

async function attempt(ctx: TWebhooksContext, loaded: TLoaded): Promise<TAttempt> {
  try {
    const url = new URL(loaded.webhook.url);
    assertDeliverableUrl(url, ctx.options.allowPrivateUrls);
    const secret = secretBox.open(
      loaded.webhook.secretEncrypted,
      ctx.options.encryptionKey,
      secretBox.sealContext('webhooks', loaded.webhook.id),
    );
    const body = envelopeBody(loaded.event);
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'social-post-service-webhooks/1.0',
      ...signatureHeaders(secret, loaded.event.id, body, Math.floor(Date.now() / 1000)),
    };
    const { statusCode, head, encoding } = await post(ctx, url, body, headers);
    const ok = statusCode >= 200 && statusCode < 300;
    return { ok, statusCode, error: ok ? null : failureText(statusCode, head, encoding).slice(0, MAX_ERROR) };
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
export async function processDelivery(ctx: TWebhooksContext, job: Job, token?: string): Promise<string> {
  const payload = parsePayload('webhookDelivery', job.data);
  if (!payload) throw new UnrecoverableError('Malformed delivery payload');
  const { slots } = ctx;
  // Known owner and no room: back to the delayed set before even reading the delivery.
  const webhookId = webhookOfDeliveryJob(job.id);
  const owner = webhookId ? slots.accountOf(webhookId) : undefined;
  if (webhookId && owner && !slots.hasRoom(webhookId, owner)) return defer(ctx, job, token);
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
  const accountId = loaded.webhook.accountId;
  slots.remember(loaded.webhookId, accountId);
  const slot = slots.take(loaded.webhookId, accountId);
  if (slot === null) return defer(ctx, job, token);
  try {
    return await deliver(ctx, job, loaded);
  } finally {
    slots.release(loaded.webhookId, accountId, slot);
  }
}

/**
 * Puts the job back (delayed; no attempt counted, no slot held) while its webhook or account already has
 * its share of this process's slots in flight.
 */
async function defer(ctx: TWebhooksContext, job: Job, token: string | undefined): Promise<never> {
  if (!token || !job.id) throw new Error('cannot defer a delivery without its job lock');
  const webhookId = webhookOfDeliveryJob(job.id);
  const delay = ctx.slots.deferFor(webhookId, webhookId ? ctx.slots.accountOf(webhookId) : undefined);
  await job.moveToDelayed(Date.now() + delay, token);
  throw new DelayedError();
}

async function deliver(ctx: TWebhooksContext, job: Job, loaded: TLoaded): Promise<string> {
  const { options } = ctx;
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
