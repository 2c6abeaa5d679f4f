import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
// The service's own signer (apps/webhooks), so the client is checked against what deliveries really carry.
import { signatureHeaders } from '../../../apps/webhooks/src/signature.js';
import {
  verifyServiceSignature,
  verifyStandardWebhook,
  verifyWebhook,
  WebhookVerificationError,
} from '../src/index.js';

const secret = `whsec_${randomBytes(32).toString('base64')}`;
const now = Date.parse('2026-11-26T12:00:00Z');
const nowSec = now / 1000;
const event = {
  id: 'evt-1',
  type: 'post.published',
  created_at: '2026-11-26T12:00:00.000Z',
  data: { post: { id: 'p1', content: 'héllo ✓', status: 'published' } },
};
const raw = JSON.stringify(event);

function failure(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error.reason;
    throw error;
  }
  return 'verified';
}

describe('webhook signature verification', () => {
  it("accepts a delivery signed by the service's signer, from a string, bytes, Headers or Node headers", () => {
    const headers = signatureHeaders(secret, event.id, raw, nowSec);
    expect(verifyWebhook(raw, headers, secret, { now })).toEqual(event);
    expect(verifyWebhook(Buffer.from(raw), new Headers(headers), secret, { now })).toEqual(event);
    expect(verifyWebhook(new TextEncoder().encode(raw), { ...headers, host: 'x' }, secret, { now }).id).toBe(
      'evt-1',
    );
    // Header names in any case (a framework that keeps them as sent).
    const upper = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]));
    expect(verifyWebhook(raw, upper, secret, { now }).type).toBe('post.published');
  });

  it('agrees with the standardwebhooks library both ways', () => {
    const signed = new Webhook(secret).sign('msg-1', new Date(now), raw);
    const headers = {
      'webhook-id': 'msg-1',
      'webhook-timestamp': String(nowSec),
      'webhook-signature': signed,
    };
    expect(() => verifyStandardWebhook(raw, headers, secret, { now })).not.toThrow();
    const ours = signatureHeaders(secret, 'evt-1', raw, Math.floor(Date.now() / 1000));
    expect(new Webhook(secret).verify(raw, ours)).toEqual(event);
  });

  it('refuses a changed body, another secret, a changed id or timestamp', () => {
    const headers = signatureHeaders(secret, event.id, raw, nowSec);
    const other = `whsec_${randomBytes(32).toString('base64')}`;
    expect(failure(() => verifyWebhook(raw.replace('p1', 'p2'), headers, secret, { now }))).toBe(
      'signature_mismatch',
    );
    expect(failure(() => verifyWebhook(raw, headers, other, { now }))).toBe('signature_mismatch');
    expect(failure(() => verifyWebhook(raw, { ...headers, 'webhook-id': 'evt-2' }, secret, { now }))).toBe(
      'signature_mismatch',
    );
    const later = { ...headers, 'webhook-timestamp': String(nowSec + 1) };
    expect(failure(() => verifyWebhook(raw, later, secret, { now }))).toBe('signature_mismatch');
  });

  it('refuses a timestamp outside the tolerance either way, and accepts one inside it', () => {
    const old = signatureHeaders(secret, event.id, raw, nowSec - 301);
    expect(failure(() => verifyWebhook(raw, old, secret, { now }))).toBe('timestamp_out_of_tolerance');
    const future = signatureHeaders(secret, event.id, raw, nowSec + 301);
    expect(failure(() => verifyWebhook(raw, future, secret, { now }))).toBe('timestamp_out_of_tolerance');
    const edge = signatureHeaders(secret, event.id, raw, nowSec - 300);
    expect(failure(() => verifyWebhook(raw, edge, secret, { now }))).toBe('verified');
    expect(failure(() => verifyWebhook(raw, old, secret, { now, toleranceSec: 600 }))).toBe('verified');
    const bad = { ...edge, 'webhook-timestamp': '1e9' };
    expect(failure(() => verifyWebhook(raw, bad, secret, { now }))).toBe('bad_timestamp');
  });

  it('requires the timestamped signature unless told to accept the spec header alone', () => {
    const headers = signatureHeaders(secret, event.id, raw, nowSec);
    const serviceOnly = { 'x-service-signature': headers['x-service-signature'] ?? '' };
    expect(failure(() => verifyWebhook(raw, serviceOnly, secret, { now }))).toBe('missing_signature');
    expect(verifyWebhook(raw, serviceOnly, secret, { now, allowServiceSignatureOnly: true })).toEqual(event);
    expect(
      failure(() =>
        verifyWebhook(raw.replace('p1', 'p2'), serviceOnly, secret, { allowServiceSignatureOnly: true }),
      ),
    ).toBe('signature_mismatch');
    // A timestamp without its signature counts for nothing.
    const { 'webhook-signature': _dropped, ...unsigned } = headers;
    expect(failure(() => verifyWebhook(raw, unsigned, secret, { now }))).toBe('missing_signature');
    expect(failure(() => verifyWebhook(raw, {}, secret, { now, allowServiceSignatureOnly: true }))).toBe(
      'missing_signature',
    );
  });

  it('checks the spec signature too when both are present', () => {
    const headers = signatureHeaders(secret, event.id, raw, nowSec);
    const forged = {
      ...headers,
      'x-service-signature': createHmac('sha256', 'other').update(raw).digest('hex'),
    };
    expect(failure(() => verifyWebhook(raw, forged, secret, { now }))).toBe('signature_mismatch');
    expect(() => verifyServiceSignature(raw, headers, secret)).not.toThrow();
    expect(() => verifyServiceSignature(raw, { 'x-service-signature': 'abc' }, secret)).toThrow(
      WebhookVerificationError,
    );
  });

  it('accepts any of several signatures and any of several secrets (rotation)', () => {
    const headers = signatureHeaders(secret, event.id, raw, nowSec);
    const older = `whsec_${randomBytes(32).toString('base64')}`;
    const several = { ...headers, 'webhook-signature': `v1,AAAA v1a,zzz ${headers['webhook-signature']}` };
    expect(verifyStandardWebhook(raw, several, secret, { now })).toBeUndefined();
    expect(verifyWebhook(raw, headers, [older, secret], { now }).id).toBe('evt-1');
    expect(failure(() => verifyWebhook(raw, headers, [older], { now }))).toBe('signature_mismatch');
    expect(() => verifyWebhook(raw, headers, [], { now })).toThrow(TypeError);
  });

  it('refuses a signed body that is not an event envelope', () => {
    const body = '["not", "an", "event"]';
    const headers = signatureHeaders(secret, 'evt-9', body, nowSec);
    expect(failure(() => verifyWebhook(body, headers, secret, { now }))).toBe('bad_payload');
  });
});
