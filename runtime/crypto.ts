import { createHash, createHmac, randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const scrypt = (password: string, salt: Buffer, keylen: number, options: ScryptOptions): Promise<Buffer> =>
  new Promise((resolve, reject) => scryptCb(password, salt, keylen, options, (err, key) => (err ? reject(err) : resolve(key))));

// N=2^15, r=8, p=1: OWASP's minimum for scrypt; runs on libuv's pool, never on the event loop.
const SCRYPT = { N: 32768, r: 8, p: 1, maxmem: 64 * 1024 * 1024 } as const;
const KEY_LEN = 32;

/** Hashes a password with scrypt and a random salt; the result embeds its parameters. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password.normalize('NFKC'), salt, KEY_LEN, SCRYPT);
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/** Checks a password against hashPassword's output in constant time. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [, n, r, p, saltText, keyText] = parts as [string, string, string, string, string, string];
  const expected = Buffer.from(keyText, 'base64url');
  const key = await scrypt(password.normalize('NFKC'), Buffer.from(saltText, 'base64url'), expected.length, {
    N: Number(n), r: Number(r), p: Number(p), maxmem: SCRYPT.maxmem,
  });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** SHA-256 of a string, hex. Used to store API keys: a leaked table does not leak keys. */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Compares two secrets in time independent of where they differ (hashes first, so lengths leak nothing). */
export function secretsEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb);
}

/** A url-safe random token of `bytes` bytes of entropy. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/**
 * Checks a `sha256=<hex>` HMAC-SHA256 signature of `body` under `key` in constant time (the
 * comparison never stops at the first differing byte, and a malformed header costs the same).
 */
export function verifyHmacSha256(key: string, body: Buffer, header: string | undefined): boolean {
  const expected = createHmac('sha256', key).update(body).digest();
  const match = header === undefined ? null : /^sha256=([0-9a-fA-F]{64})$/.exec(header.trim());
  const given = match ? Buffer.from(match[1]!, 'hex') : Buffer.alloc(expected.length);
  return timingSafeEqual(given, expected) && match !== null;
}

/** `sha256=<hex>` HMAC-SHA256 of `body` under `key` (what a callback sender puts in x-callback-signature). */
export function signHmacSha256(key: string, body: Buffer | string): string {
  return `sha256=${createHmac('sha256', key).update(body).digest('hex')}`;
}
