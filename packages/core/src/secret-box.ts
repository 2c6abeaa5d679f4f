import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

// Social tokens and webhook secrets must be readable again (to call networks, to sign), so they are
// encrypted, not hashed: AES-256-GCM with a random IV, authenticated so tampering is detected.
const VERSION = 'v1';

export function parseEncryptionKey(value: string): Buffer {
  const trimmed = value.trim();
  const key = /^[0-9a-f]{64}$/i.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
  if (key.length !== 32) throw new Error('ENCRYPTION_KEY must be 32 bytes, as 64 hex characters or base64');
  return key;
}

/** A stable key for development and tests only, derived from a label (never used in production). */
export function developmentKey(label: string): Buffer {
  return createHash('sha256').update(`social-post-service development key: ${label}`).digest();
}

export function seal(plaintext: string, key: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return `${VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
}

export function open(sealed: string, key: Buffer): string {
  const [version, payload] = sealed.split('.');
  if (version !== VERSION || !payload) throw new Error('Unrecognised sealed value');
  const raw = Buffer.from(payload, 'base64url');
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
}
