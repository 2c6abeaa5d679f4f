import {
  parseAppEnv,
  parseDuration,
  parseDurationList,
  ZBooleanFlag,
  ZCommonEnv,
  ZDuration,
  ZMetricsHost,
  zMetricsPort,
} from '@sps/core';
import { z } from 'zod';

const ZDurationList = z.string().transform((value, ctx) => {
  try {
    const list = parseDurationList(value);
    if (list.length === 0) throw new Error('empty');
    return list;
  } catch {
    ctx.addIssue({ code: 'custom', message: `"${value}" is not a list of durations like 1m,5m,30m,2h,12h` });
    return z.NEVER;
  }
});

const ZWebhooksEnv = ZCommonEnv.extend({
  /** Delays before each retry; their count is the number of retries (attempts = retries + 1). */
  WEBHOOK_RETRY_DELAYS: ZDurationList.default(parseDurationList('1m,5m,30m,2h,12h')),
  /** A receiver has this long to answer 2xx (the whole request, body included). */
  WEBHOOK_TIMEOUT: ZDuration.default(parseDuration('30s')),
  WEBHOOK_ALLOW_PRIVATE_URLS: ZBooleanFlag,
  /** `smtp://host:port` (or smtps://, with credentials in the URL); unset: owner e-mails are logged. */
  SMTP_URL: z.string().url().optional(),
  SMTP_FROM: z.string().default('Social Post Service <no-reply@localhost>'),
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(50),
  /**
   * Deliveries in flight per account in this process (default: half of WEBHOOK_CONCURRENCY), so one
   * tenant's slow or failing receivers cannot hold every slot; more wait (delayed) without holding one.
   */
  WEBHOOK_ACCOUNT_CONCURRENCY: z.coerce.number().int().min(1).max(1000).optional(),
  /** Deliveries in flight per webhook in this process (default: the account's). */
  WEBHOOK_ENDPOINT_CONCURRENCY: z.coerce.number().int().min(1).max(1000).optional(),
  /** How often this process moves undispatched outbox events to deliveries. */
  WEBHOOK_DISPATCH_EVERY: ZDuration.default(parseDuration('1s')),
  /** How often the job scheduler runs the dispatcher plus the reconciler (open deliveries without a job). */
  WEBHOOK_RECONCILE_EVERY: ZDuration.default(parseDuration('30s')),
  /** BullMQ job lock; a crashed worker's delivery is picked up again after about this long. */
  WEBHOOK_LOCK_DURATION: ZDuration.default(parseDuration('30s')),
  /** `GET /metrics` and `GET /healthz` of this process; 0 turns the server off. */
  METRICS_PORT: zMetricsPort(9102),
  /** Where METRICS_PORT listens: loopback by default (see README, Security). */
  METRICS_HOST: ZMetricsHost,
});

export type TWebhooksEnv = z.output<typeof ZWebhooksEnv> & {
  encryptionKey: Buffer;
  usesDevelopmentKey: boolean;
};

export function loadEnv(source: Record<string, string | undefined> = process.env): TWebhooksEnv {
  return parseAppEnv(ZWebhooksEnv, source);
}
