import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CounterReply } from '../fixtures/runtime/test-kinds.js';
import { keyOnWorker, rejection, RuntimeHarness, waitUntil } from '../fixtures/runtime/harness.js';

test('shards move back to a replacement only after the interim owner finished and passivated their actors', async (t) => {
  const h = new RuntimeHarness(t);
  const config = h.config(await h.dataDir(), { workers: 2, askTimeoutMs: 10_000 });
  const system = await h.start(config);
  const ref = { kind: 'counter', key: keyOnWorker('handoff-', 0, 2, config.shards) };
  const killer = { kind: 'counter', key: keyOnWorker('killer-', 0, 2, config.shards) };
  await system.ask(ref, { op: 'inc' });

  const ready = new Promise<void>((resolve) => system.on('worker-ready', () => resolve()));
  await rejection(system.ask(killer, { op: 'exit' }));
  // Re-homed at once: the survivor serves the actor and gets a long message to work on.
  const order: string[] = [];
  const long = system.ask<CounterReply>(ref, { op: 'sleep', ms: 600 }).then((r) => (order.push('long'), r));
  await ready;
  await waitUntil(() => system.stats().movingShards > 0, 2000, 'the handoff to start');
  // Sent while the shard moves: buffered on the main thread, delivered to the new owner after.
  const inc = system.ask<CounterReply>(ref, { op: 'inc' }).then((r) => (order.push('inc'), r));
  const [longReply, incReply] = await Promise.all([long, inc]);

  assert.deepEqual(order, ['long', 'inc'], 'a buffered message overtook the one still running on the old owner');
  assert.equal(longReply.workerIndex, 1);
  assert.equal(incReply.workerIndex, 0);
  assert.equal(incReply.count, 2);
  assert.equal(incReply.passivations, longReply.passivations + 1, 'the old owner did not passivate the actor before handing it over');
  assert.equal(system.stats().movingShards, 0);
  assert.deepEqual(system.stats().workers.map((w) => w.shards), [config.shards / 2, config.shards / 2]);
});
