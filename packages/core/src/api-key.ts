import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** Every key starts with this, so leaked keys are recognisable by secret scanners. */
export const API_KEY_PREFIX = 'sps_live_';
const KEY_PATTERN = /^sps_live_[A-Za-z0-9_-]{43}$/;

export interface TNewApiKey {
  /** Shown once; never stored. */
  key: string;
  /** Kept for display ("sps_live_AbCd"). */
  prefix: string;
  hash: string;
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export function generateApiKey(): TNewApiKey {
  const key = API_KEY_PREFIX + randomBytes(32).toString('base64url');
  return { key, prefix: key.slice(0, API_KEY_PREFIX.length + 4), hash: hashApiKey(key) };
}

export function looksLikeApiKey(value: string): boolean {
  return KEY_PATTERN.test(value);
}

/** Constant-time comparison of two hex digests (or any two strings). */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
