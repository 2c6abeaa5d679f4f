import { createHmac } from 'node:crypto';

/**
 * Both signature schemes of a delivery, over the exact raw body string that is sent:
 * - `X-Service-Signature`: hex HMAC-SHA256 of the body, keyed with the secret string's UTF-8 bytes (spec).
 * - Standard Webhooks: `webhook-id` (the event id, the same on every attempt), `webhook-timestamp` (unix
 *   seconds of this attempt) and `webhook-signature: v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`
 *   keyed with the base64-decoded part of the `whsec_…` secret, as the `standardwebhooks` libraries expect.
 */
export function signatureHeaders(
  secret: string,
  eventId: string,
  rawBody: string,
  timestampSec: number,
): Record<string, string> {
  const serviceSignature = createHmac('sha256', secret).update(rawBody, 'utf8').digest('hex');
  const standardKey = Buffer.from(
    secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret,
    'base64',
  );
  const standardSignature = createHmac('sha256', standardKey)
    .update(`${eventId}.${timestampSec}.${rawBody}`, 'utf8')
    .digest('base64');
  return {
    'x-service-signature': serviceSignature,
    'webhook-id': eventId,
    'webhook-timestamp': String(timestampSec),
    'webhook-signature': `v1,${standardSignature}`,
  };
}
