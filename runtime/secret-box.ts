import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { ParleyError } from './errors.js';

/** An AES-256-GCM ciphertext with the id of the key that sealed it (so master keys can rotate). */
export interface SealedSecret {
  kid: string;
  /** base64 of iv (12 bytes) | tag (16 bytes) | ciphertext. */
  data: string;
}

/** One encryption key from Config.encryptionKeys. */
export interface EncryptionKey {
  id: string;
  key: Buffer;
}

const unavailable = (): ParleyError => new ParleyError('SERVICE_UNAVAILABLE', 'Encryption is not configured: set PARLEY_ENCRYPTION_KEYS');

/**
 * Seals and opens secrets at rest with AES-256-GCM. The first key encrypts; any listed key
 * decrypts, so an operator rotates by putting a new key first and re-sealing (see needsReseal).
 * `aad` binds a ciphertext to its record (e.g. tenant and secret id): moved elsewhere, it fails.
 */
export class SecretBox {
  readonly #keys: readonly EncryptionKey[];

  constructor(keys: readonly EncryptionKey[]) {
    this.#keys = keys;
  }

  /** True when at least one key is configured. */
  get configured(): boolean {
    return this.#keys.length > 0;
  }

  /** Encrypts with the active (first) key; SERVICE_UNAVAILABLE when none is configured. */
  seal(plaintext: string, aad: string): SealedSecret {
    const active = this.#keys[0];
    if (!active) throw unavailable();
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', active.key, iv);
    cipher.setAAD(Buffer.from(aad, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return { kid: active.id, data: Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64') };
  }

  /** Decrypts; SERVICE_UNAVAILABLE when the key is gone, INTERNAL_ERROR when the data was tampered with. */
  open(sealed: SealedSecret, aad: string): string {
    if (!this.configured) throw unavailable();
    const key = this.#keys.find((k) => k.id === sealed.kid);
    if (!key) throw new ParleyError('SERVICE_UNAVAILABLE', `Encryption key ${sealed.kid} is no longer configured`);
    const raw = Buffer.from(sealed.data, 'base64');
    try {
      const decipher = createDecipheriv('aes-256-gcm', key.key, raw.subarray(0, 12));
      decipher.setAAD(Buffer.from(aad, 'utf8'));
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    } catch (err) {
      throw new ParleyError('INTERNAL_ERROR', 'A stored secret could not be decrypted', undefined, err);
    }
  }

  /** True when `sealed` was made with a key other than the active one. */
  needsReseal(sealed: SealedSecret): boolean {
    return this.#keys[0] !== undefined && sealed.kid !== this.#keys[0].id;
  }
}
