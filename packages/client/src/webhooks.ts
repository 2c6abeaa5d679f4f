import { createHmac, timingSafeEqual } from 'node:crypto';
import type { components } from './generated/openapi.js';

// Verifying a delivery of the service's webhooks (Variant B). Each delivery carries two signatures of the raw body:
// - the spec's `X-Service-Signature`: hex HMAC-SHA256 of the body, keyed with the secret string's UTF-8 bytes;
// - Standard Webhooks (https://www.standardwebhooks.com/, "Verifying webhook authenticity"): `webhook-id`,
//   `webhook-timestamp` (unix seconds) and `webhook-signature` (space-separated `v1,<base64>` entries), each an
//   HMAC-SHA256 of `<id>.<timestamp>.<body>` keyed with the base64-decoded part after `whsec_`.
// Only the second binds a time, so it is what protects against a replayed delivery; it is required by default.

export type TWebhookEventType = components['schemas']['CreateWebhookB']['events'][number];

/** The event envelope a delivery carries (the spec's "Event envelope, Variant B"). */
export interface TWebhookEvent {
  /** Unique per event, the same on every attempt: use it to drop duplicates. */
  id: string;
  type: TWebhookEventType;
  created_at: string;
  data: { post?: components['schemas']['PostB']; account?: components['schemas']['AccountB'] };
}

export type TWebhookFailure =
  | 'missing_signature'
  | 'missing_header'
  | 'bad_timestamp'
  | 'timestamp_out_of_tolerance'
  | 'signature_mismatch'
  | 'bad_payload';

/** The delivery is not authentic (or not readable): answer it with a 4xx and do not act on it. */
export class WebhookVerificationError extends Error {
  readonly reason: TWebhookFailure;

  constructor(reason: TWebhookFailure, message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
    this.reason = reason;
  }
}

/** Fetch's `Headers`, or Node's `req.headers` (lower-case names; a repeated header as an array). */
export type TWebhookHeaders =
  | { get(name: string): string | null }
  | Record<string, string | string[] | undefined>;

export interface TVerifyOptions {
  /** How far `webhook-timestamp` may be from now, either way, in seconds (default 300, as Standard Webhooks). */
  toleranceSec?: number;
  /**
   * Accept a delivery that carries only `X-Service-Signature` (no timestamp, so a captured delivery could be
   * replayed; drop duplicates by event `id`). Default false: the Standard Webhooks signature is required.
   */
  allowServiceSignatureOnly?: boolean;
  /** The current time in milliseconds (default Date.now()). */
  now?: number;
}

type TPayload = string | Uint8Array;

function header(headers: TWebhookHeaders, name: string): string | undefined {
  if (typeof headers.get === 'function')
    return (headers.get as (n: string) => string | null)(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const value = record[name] ?? record[Object.keys(record).find((k) => k.toLowerCase() === name) ?? ''];
  return Array.isArray(value) ? value.join(' ') : value;
}

function bytesOf(payload: TPayload): Buffer {
  return typeof payload === 'string' ? Buffer.from(payload, 'utf8') : Buffer.from(payload);
}

/** Constant-time equality of two byte strings (a length difference answers false without comparing). */
function sameBytes(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

function secretsOf(secret: string | readonly string[]): readonly string[] {
  const list = typeof secret === 'string' ? [secret] : secret;
  if (list.length === 0 || list.some((s) => s === '')) throw new TypeError('a webhook secret is required');
  return list;
}

/** The spec's `X-Service-Signature`. Several secrets may be given while one is being replaced. */
export function verifyServiceSignature(
  payload: TPayload,
  headers: TWebhookHeaders,
  secret: string | readonly string[],
): void {
  const given = header(headers, 'x-service-signature')?.trim().toLowerCase();
  if (!given) throw new WebhookVerificationError('missing_signature', 'no X-Service-Signature header');
  const givenBytes = Buffer.from(given, 'utf8');
  const body = bytesOf(payload);
  for (const key of secretsOf(secret)) {
    const expected = Buffer.from(createHmac('sha256', key).update(body).digest('hex'), 'utf8');
    if (sameBytes(expected, givenBytes)) return;
  }
  throw new WebhookVerificationError('signature_mismatch', 'X-Service-Signature does not match');
}

/** The Standard Webhooks signature, with the timestamp checked against now. */
export function verifyStandardWebhook(
  payload: TPayload,
  headers: TWebhookHeaders,
  secret: string | readonly string[],
  options: Pick<TVerifyOptions, 'toleranceSec' | 'now'> = {},
): void {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signature = header(headers, 'webhook-signature');
  if (!signature) throw new WebhookVerificationError('missing_signature', 'no webhook-signature header');
  if (!id || !timestamp) {
    throw new WebhookVerificationError('missing_header', 'webhook-id and webhook-timestamp are required');
  }
  if (!/^\d{1,15}$/.test(timestamp)) {
    throw new WebhookVerificationError('bad_timestamp', 'webhook-timestamp is not unix seconds');
  }
  const toleranceSec = options.toleranceSec ?? 300;
  const nowSec = Math.floor((options.now ?? Date.now()) / 1000);
  if (Math.abs(nowSec - Number(timestamp)) > toleranceSec) {
    throw new WebhookVerificationError(
      'timestamp_out_of_tolerance',
      `webhook-timestamp is more than ${toleranceSec} s from now`,
    );
  }
  const signed = Buffer.concat([Buffer.from(`${id}.${timestamp}.`, 'utf8'), bytesOf(payload)]);
  const candidates = signature
    .split(' ')
    .filter((entry) => entry.startsWith('v1,'))
    .map((entry) => Buffer.from(entry.slice(3), 'base64'));
  for (const secretText of secretsOf(secret)) {
    const key = Buffer.from(secretText.startsWith('whsec_') ? secretText.slice(6) : secretText, 'base64');
    const expected = createHmac('sha256', key).update(signed).digest();
    if (candidates.some((candidate) => sameBytes(expected, candidate))) return;
  }
  throw new WebhookVerificationError('signature_mismatch', 'no webhook-signature entry matches');
}

/**
 * Checks a delivery and returns its event. `payload` must be the raw body exactly as received (not parsed and
 * re-serialised). The Standard Webhooks signature is required (and the spec's `X-Service-Signature` is checked
 * too when present), unless `allowServiceSignatureOnly` accepts a delivery signed only the spec's way.
 */
export function verifyWebhook(
  payload: TPayload,
  headers: TWebhookHeaders,
  secret: string | readonly string[],
  options: TVerifyOptions = {},
): TWebhookEvent {
  const hasStandard = header(headers, 'webhook-signature') !== undefined;
  const hasService = header(headers, 'x-service-signature') !== undefined;
  // Unsigned is never accepted: without X-Service-Signature the Standard Webhooks signature is always required.
  const serviceAlone = hasService && !hasStandard && options.allowServiceSignatureOnly === true;
  if (!serviceAlone) verifyStandardWebhook(payload, headers, secret, options);
  if (hasService) verifyServiceSignature(payload, headers, secret);
  let event: unknown;
  try {
    event = JSON.parse(typeof payload === 'string' ? payload : Buffer.from(payload).toString('utf8'));
  } catch {
    throw new WebhookVerificationError('bad_payload', 'the body is not JSON');
  }
  const e = event as Partial<TWebhookEvent> | null;
  if (!e || typeof e.id !== 'string' || typeof e.type !== 'string' || typeof e.data !== 'object') {
    throw new WebhookVerificationError('bad_payload', 'the body is not an event envelope');
  }
  const webhookId = header(headers, 'webhook-id');
  if (webhookId !== undefined && webhookId !== e.id) {
    throw new WebhookVerificationError('bad_payload', 'webhook-id is not the event id');
  }
  return e as TWebhookEvent;
}
