import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ParleyError } from '../../runtime/index.js';
import type { CounterReply } from '../fixtures/runtime/test-kinds.js';
import { rejection, RuntimeHarness, waitUntil } from '../fixtures/runtime/harness.js';

test('an ask past its deadline fails with SERVICE_UNAVAILABLE and the late reply is dropped', async (t) => {
  const h = new RuntimeHarness(t);
  const system = await h.start(h.config(await h.dataDir()));
  const ref = { kind: 'counter', key: 'slowpoke' };
  await system.ask(ref, { op: 'get' }); // created, so the deadline only covers the handler

  const started = performance.now();
  const err = await rejection(system.ask(ref, { op: 'sleep', ms: 250 }, { timeoutMs: 50 }));
  const elapsed = performance.now() - started;
  assert.ok(err instanceof ParleyError);
  assert.equal(err.code, 'SERVICE_UNAVAILABLE');
  assert.ok(elapsed >= 45 && elapsed < 300, `failed after ${elapsed.toFixed(0)} ms`);
  assert.equal(system.stats().pendingAsks, 0);

  await waitUntil(() => system.stats().droppedReplies === 1, 2000, 'the late reply');
  assert.equal(system.stats().workers.reduce((n, w) => n + w.inFlight, 0), 0);
  const next = await system.ask<CounterReply>(ref, { op: 'inc' });
  assert.equal(next.count, 1);
  // The default deadline comes from config.askTimeoutMs.
  const h2 = await h.start(h.config(await h.dataDir(), { workers: 1, askTimeoutMs: 40 }));
  assert.equal((await rejection(h2.ask(ref, { op: 'sleep', ms: 150 }))).code, 'SERVICE_UNAVAILABLE');
});
