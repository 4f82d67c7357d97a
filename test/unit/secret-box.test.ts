import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { loadConfig, SecretBox, type EncryptionKey } from '../../runtime/index.js';

const key = (id: string): EncryptionKey => ({ id, key: randomBytes(32) });

/** Asserts `fn` throws a ParleyError-like value with this code. */
function throwsCode(fn: () => unknown, code: string): void {
  assert.throws(fn, (err: unknown) => (err as { code?: string }).code === code);
}

describe('SecretBox', () => {
  const aad = 'tool-secret:tenant-a:secret-1';

  test('seal then open returns the plaintext; the ciphertext is neither the plaintext nor repeated', () => {
    const box = new SecretBox([key('k1')]);
    const plaintext = 'sk-live-Ünïcode-🔑-value';
    const a = box.seal(plaintext, aad);
    const b = box.seal(plaintext, aad);
    assert.equal(a.kid, 'k1');
    assert.notEqual(a.data, b.data, 'a fresh IV per seal');
    assert.ok(!Buffer.from(a.data, 'base64').toString('utf8').includes('sk-live'));
    assert.equal(box.open(a, aad), plaintext);
    assert.equal(box.open(b, aad), plaintext);
  });

  test('a tampered ciphertext, IV or tag fails with INTERNAL_ERROR', () => {
    const box = new SecretBox([key('k1')]);
    const sealed = box.seal('value', aad);
    const raw = Buffer.from(sealed.data, 'base64');
    for (const at of [0, 12, raw.length - 1]) {
      const bad = Buffer.from(raw);
      bad[at] = bad[at]! ^ 0x01;
      throwsCode(() => box.open({ kid: 'k1', data: bad.toString('base64') }, aad), 'INTERNAL_ERROR');
    }
  });

  test('another aad (another tenant or secret) fails with INTERNAL_ERROR', () => {
    const box = new SecretBox([key('k1')]);
    const sealed = box.seal('value', aad);
    throwsCode(() => box.open(sealed, 'tool-secret:tenant-b:secret-1'), 'INTERNAL_ERROR');
    throwsCode(() => box.open(sealed, 'tool-secret:tenant-a:secret-2'), 'INTERNAL_ERROR');
  });

  test('rotation: new seals use the first key, the old key still opens, needsReseal tells them apart', () => {
    const k1 = key('k1');
    const k2 = key('k2');
    const before = new SecretBox([k1]);
    const old = before.seal('old value', aad);
    assert.equal(before.needsReseal(old), false);

    const after = new SecretBox([k2, k1]);
    assert.equal(after.open(old, aad), 'old value');
    assert.equal(after.needsReseal(old), true);
    const fresh = after.seal('new value', aad);
    assert.equal(fresh.kid, 'k2');
    assert.equal(after.needsReseal(fresh), false);
    assert.equal(after.open(fresh, aad), 'new value');

    // Once k1 is removed from the list, what it sealed can no longer be opened.
    const k2Only = new SecretBox([k2]);
    throwsCode(() => k2Only.open(old, aad), 'SERVICE_UNAVAILABLE');
    assert.equal(k2Only.open(fresh, aad), 'new value');
  });

  test('a key with the same id but other bytes does not open (INTERNAL_ERROR)', () => {
    const sealed = new SecretBox([key('k1')]).seal('value', aad);
    throwsCode(() => new SecretBox([key('k1')]).open(sealed, aad), 'INTERNAL_ERROR');
  });

  test('without keys: not configured, seal and open answer SERVICE_UNAVAILABLE (HTTP 503)', () => {
    const box = new SecretBox([]);
    assert.equal(box.configured, false);
    throwsCode(() => box.seal('value', aad), 'SERVICE_UNAVAILABLE');
    throwsCode(() => box.open({ kid: 'k1', data: 'AAAA' }, aad), 'SERVICE_UNAVAILABLE');
    assert.equal(box.needsReseal({ kid: 'k1', data: 'AAAA' }), false);
  });

  test('keys from PARLEY_ENCRYPTION_KEYS: the first listed seals', () => {
    const k1 = randomBytes(32).toString('base64');
    const k2 = randomBytes(32).toString('base64');
    const config = loadConfig({ PARLEY_ENCRYPTION_KEYS: `new:${k2},old:${k1}` });
    const box = new SecretBox(config.encryptionKeys);
    assert.equal(box.seal('v', aad).kid, 'new');
    const old = new SecretBox(loadConfig({ PARLEY_ENCRYPTION_KEYS: `old:${k1}` }).encryptionKeys).seal('from old', aad);
    assert.equal(box.open(old, aad), 'from old');
  });
});
