import { randomBytes, randomUUID } from 'node:crypto';

const BASE36 = '0123456789abcdefghijklmnopqrstuvwxyz';
let counter = randomBytes(2).readUInt16BE(0);
const fingerprint = randomBytes(3).toString('hex').slice(0, 4);

/**
 * A collision-resistant id in the CUID form the spec uses for projects: `c` + time + counter +
 * process fingerprint + randomness, lower-case base36, 25 characters, sortable by creation time.
 */
export function cuid(): string {
  counter = (counter + 1) % 1679616; // 36^4
  const time = Date.now().toString(36).padStart(8, '0');
  const count = counter.toString(36).padStart(4, '0');
  const rnd = randomBytes(8);
  let random = '';
  for (let i = 0; i < 8; i++) random += BASE36[rnd[i]! % 36];
  return `c${time}${count}${fingerprint}${random}`;
}

/** True for strings shaped like ids this service issues (used to reject junk early). */
export function isCuid(s: string): boolean {
  return /^c[0-9a-z]{24}$/.test(s);
}

/** A request id for logs and the X-Request-Id header. */
export function requestId(): string {
  return randomUUID();
}
