import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CounterReply } from '../fixtures/runtime/test-kinds.js';
import { keyOnWorker, nextEvent, rejection, RuntimeHarness, waitUntil } from '../fixtures/runtime/harness.js';

test('a stuck worker (infinite loop) is caught by the ping timeout and replaced', async (t) => {
  const h = new RuntimeHarness(t);
  const config = h.config(await h.dataDir(), { workers: 2, askTimeoutMs: 10_000 });
  const system = await h.start(config, { pingIntervalMs: 50, pingTimeoutMs: 300 });
  const ref = { kind: 'counter', key: keyOnWorker('stuck-', 1, 2, config.shards) };
  const first = await system.ask<CounterReply>(ref, { op: 'inc' });
  assert.equal(first.workerIndex, 1);

  const died = nextEvent(system, 'worker-died');
  const started = performance.now();
  const err = await rejection(system.ask(ref, { op: 'loop' }));
  const elapsed = performance.now() - started;
  assert.equal(err.code, 'SERVICE_UNAVAILABLE');
  assert.ok(elapsed < 2000, `detected after ${elapsed.toFixed(0)} ms (the ask deadline is 10 s)`);
  const death = await died;
  assert.equal(death.index, 1);
  assert.match(death.reason, /pong/);

  const after = await system.ask<CounterReply>(ref, { op: 'inc' });
  assert.equal(after.count, 2);
  await waitUntil(() => system.ready && system.stats().movingShards === 0, 5000, 'the replacement');
  const stats = system.stats();
  assert.equal(stats.workers[1]!.restarts, 1);
  assert.notEqual(stats.workers[1]!.threadId, first.threadId);
});
