import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

// Social tokens and webhook secrets must be readable again (to call networks, to sign), so they are
// encrypted, not hashed: AES-256-GCM with a random 96-bit IV, authenticated so tampering is detected.
//
// v2 (written since the second security round): the tag is always 16 bytes (`authTagLength`: Node would
// otherwise accept a shorter, forgeable tag on opening) and the value is bound to where it is stored (the
// table and the row, e.g. `social_accounts:<id>`) as associated data, so a sealed value copied into another
// row, or another tenant's row, does not open. v1 (before): the same cipher without associated data; such
// values keep opening (with the tag length fixed too) and are sealed again as v2 when their row is written.
const V1 = 'v1';
const V2 = 'v2';
const IV_BYTES = 12;
const TAG_BYTES = 16;

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

/** Where a sealed value lives (`<table>:<row key>`): what it is bound to. */
export function sealContext(table: string, row: string): string {
  return `${table}:${row}`;
}

function encrypt(version: string, plaintext: string, key: Buffer, context: string | null): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  if (context !== null) cipher.setAAD(Buffer.from(context, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return `${version}.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
}

/** Seals `plaintext` for the row named by `context` (`sealContext(table, row)`). */
export function seal(plaintext: string, key: Buffer, context: string): string {
  return encrypt(V2, plaintext, key, context);
}

/**
 * The format before v2 (no associated data): only for fixtures standing for values stored before it, and
 * the tests that show those keep opening. Production code seals with `seal`.
 */
export function sealV1(plaintext: string, key: Buffer): string {
  return encrypt(V1, plaintext, key, null);
}

/** Opens a value sealed for `context` (v2), or an older v1 value stored before the binding existed. */
export function open(sealed: string, key: Buffer, context: string): string {
  const dot = sealed.indexOf('.');
  const version = sealed.slice(0, dot);
  const payload = sealed.slice(dot + 1);
  if ((version !== V1 && version !== V2) || !payload) throw new Error('Unrecognised sealed value');
  const raw = Buffer.from(payload, 'base64url');
  if (raw.length < IV_BYTES + TAG_BYTES) throw new Error('Unrecognised sealed value');
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES), {
    authTagLength: TAG_BYTES,
  });
  if (version === V2) decipher.setAAD(Buffer.from(context, 'utf8'));
  decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString(
    'utf8',
  );
}

/** False for values in an older format, which their next write seals again. */
export function isCurrentSeal(sealed: string): boolean {
  return sealed.startsWith(`${V2}.`);
}
