import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

// Dashboard passwords: scrypt (memory-hard, in Node's own crypto, so no native add-on to build). N=2^17, r=8,
// p=1 is OWASP's scrypt recommendation (Password Storage Cheat Sheet): 128 MiB and a few hundred milliseconds
// per check, which is what makes a stolen table slow to attack. The parameters are stored with each hash, so
// hashes made with the earlier N=2^15 keep verifying and are replaced at the next sign-in (`needsRehash`).
const N = 2 ** 17;
const R = 8;
const P = 1;
const KEY_LENGTH = 32;
/** Room for N=2^17, r=8 (128 MiB) plus Node's bookkeeping; stored hashes asking for more are refused. */
const MAX_MEM = 160 * 1024 * 1024;

export const PASSWORD_MIN_LENGTH = 10;
/** Long inputs would only cost CPU: nothing longer is hashed. */
export const PASSWORD_MAX_LENGTH = 200;

function derive(password: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, { N: n, r, p, maxmem: MAX_MEM }, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });
}

/** Why a new password cannot be used, or null. */
export function passwordProblem(password: string): string | null {
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH) return `must be at least ${PASSWORD_MIN_LENGTH} characters`;
  if (length > PASSWORD_MAX_LENGTH) return `must be at most ${PASSWORD_MAX_LENGTH} characters`;
  return null;
}

/** `scrypt$N$r$p$salt$hash` (base64url parts). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, N, R, P);
  return ['scrypt', N, R, P, salt.toString('base64url'), key.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  if (password.length > PASSWORD_MAX_LENGTH * 2) return false;
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !n || !r || !p || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const key = await derive(password, Buffer.from(salt, 'base64url'), Number(n), Number(r), Number(p));
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** True when `stored` was made with other (older, weaker) parameters than new hashes get. */
export function needsRehash(stored: string): boolean {
  const [scheme, n, r, p] = stored.split('$');
  return scheme !== 'scrypt' || Number(n) !== N || Number(r) !== R || Number(p) !== P;
}

/** A hash to verify against when no account matches, so a miss costs what a hit costs. */
let decoy: Promise<string> | null = null;
export function decoyPasswordHash(): Promise<string> {
  decoy ??= hashPassword(randomBytes(16).toString('hex'));
  return decoy;
}
