import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CounterReply } from '../fixtures/runtime/test-kinds.js';
import { keyOnWorker, rejection, RuntimeHarness, waitUntil } from '../fixtures/runtime/harness.js';

test('a worker that exits fails its in-flight asks at once, is replaced, and its shards come back', async (t) => {
  const h = new RuntimeHarness(t);
  const config = h.config(await h.dataDir(), { workers: 2, askTimeoutMs: 10_000 });
  const system = await h.start(config);
  const events: string[] = [];
  system.on('worker-died', ({ index }) => events.push(`died:${index}`));
  system.on('worker-ready', ({ index }) => events.push(`ready:${index}`));

  const ref = { kind: 'counter', key: keyOnWorker('crash-', 0, 2, config.shards) };
  const bystander = { kind: 'counter', key: keyOnWorker('bystander-', 0, 2, config.shards) };
  for (let i = 0; i < 3; i++) await system.ask(ref, { op: 'inc' });
  const original = await system.ask<CounterReply>(ref, { op: 'get' });
  assert.equal(original.workerIndex, 0);

  const started = performance.now();
  const inFlight = system.ask(bystander, { op: 'sleep', ms: 5000 });
  const crash = system.ask(ref, { op: 'exit' });
  const [e1, e2] = await Promise.all([rejection(inFlight), rejection(crash)]);
  const elapsed = performance.now() - started;
  assert.equal(e1.code, 'SERVICE_UNAVAILABLE');
  assert.equal(e2.code, 'SERVICE_UNAVAILABLE');
  assert.ok(elapsed < 1000, `in-flight asks took ${elapsed.toFixed(0)} ms to fail`);

  // Served at once, by the survivor or the replacement, from the persisted state.
  const during = await system.ask<CounterReply>(ref, { op: 'get' });
  assert.equal(during.count, 3);

  await waitUntil(() => {
    const s = system.stats();
    return s.ready && s.movingShards === 0 && s.workers.every((w) => w.shards === config.shards / 2);
  }, 5000, 'the replacement to be ready and shards rebalanced');
  const stats = system.stats();
  assert.equal(stats.workers[0]!.restarts, 1);
  assert.equal(stats.workers[1]!.restarts, 0);
  assert.equal(stats.pendingAsks, 0);
  assert.deepEqual(events, ['died:0', 'ready:0']);

  const home = await system.ask<CounterReply>(ref, { op: 'inc' });
  assert.equal(home.count, 4);
  assert.equal(home.workerIndex, 0);
  assert.notEqual(home.threadId, original.threadId, 'still the dead thread');
  assert.equal(stats.workers[0]!.threadId, home.threadId);
});
