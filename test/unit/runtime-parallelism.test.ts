import assert from 'node:assert/strict';
import { test } from 'node:test';
import { keyOnWorker, RuntimeHarness } from '../fixtures/runtime/harness.js';

interface BusyReply {
  threadId: number;
  workerIndex: number;
  start: number;
  end: number;
}

test('actors on different workers run in parallel', async (t) => {
  const h = new RuntimeHarness(t);
  const config = h.config(await h.dataDir(), { workers: 2 });
  const system = await h.start(config);
  const a = { kind: 'busy', key: keyOnWorker('busy-', 0, 2, config.shards) };
  const b = { kind: 'busy', key: keyOnWorker('busy-', 1, 2, config.shards) };
  // Warm up: create both actors so only the handlers are timed.
  await Promise.all([system.ask(a, { ms: 1 }), system.ask(b, { ms: 1 })]);

  const started = performance.now();
  const [ra, rb] = await Promise.all([system.ask<BusyReply>(a, { ms: 200 }), system.ask<BusyReply>(b, { ms: 200 })]);
  const elapsed = performance.now() - started;

  assert.notEqual(ra.threadId, rb.threadId, 'both actors ran on the same thread');
  assert.deepEqual([ra.workerIndex, rb.workerIndex], [0, 1]);
  assert.ok(ra.start < rb.end && rb.start < ra.end, 'the two handlers did not overlap in time');
  assert.ok(elapsed < 380, `two 200 ms handlers took ${elapsed.toFixed(0)} ms: not parallel`);
});
