import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig, ConfigError } from '../../runtime/config.js';

test('config rejects a bad port with a message naming the variable', () => {
  assert.throws(() => loadConfig({ PARLEY_PORT: 'abc' }), (e: unknown) => e instanceof ConfigError && /PARLEY_PORT/.test(e.message));
});
