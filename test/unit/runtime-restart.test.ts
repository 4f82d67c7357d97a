import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CounterReply } from '../fixtures/runtime/test-kinds.js';
import { rejection, RuntimeHarness } from '../fixtures/runtime/harness.js';

test('a new ActorSystem on the same data folder finds the state the previous one persisted', async (t) => {
  const h = new RuntimeHarness(t);
  const dir = await h.dataDir();
  const ref = { kind: 'counter', key: 'durable' };

  const first = await h.start(h.config(dir));
  for (let i = 0; i < 3; i++) await first.ask(ref, { op: 'inc' });
  const closes: string[] = [];
  first.on('close', () => closes.push('close'));
  first.on('worker-died', () => closes.push('died'));
  const pending = rejection(first.ask(ref, { op: 'sleep', ms: 300 }));
  await Promise.all([first.close(), first.close()]);
  assert.equal((await pending).code, 'SERVICE_UNAVAILABLE');
  assert.deepEqual(closes, ['close'], 'a requested close must not look like a death, and closes once');
  assert.equal(first.ready, false);
  assert.deepEqual(first.stats().workers.map((w) => w.state), ['closed', 'closed']);

  const second = await h.start(h.config(dir));
  const r = await second.ask<CounterReply>(ref, { op: 'get' });
  assert.equal(r.count, 3);
});
