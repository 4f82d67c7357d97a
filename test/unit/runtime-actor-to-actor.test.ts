import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CounterReply } from '../fixtures/runtime/test-kinds.js';
import { keyOnWorker, rejection, RuntimeHarness } from '../fixtures/runtime/harness.js';

test('an actor asks an actor on another worker through the main thread, streaming included', async (t) => {
  const h = new RuntimeHarness(t);
  const config = h.config(await h.dataDir(), { workers: 2 });
  const system = await h.start(config);
  const relay = { kind: 'relay', key: keyOnWorker('relay-', 0, 2, config.shards) };
  const target = { kind: 'counter', key: keyOnWorker('target-', 1, 2, config.shards) };

  const r = await system.ask<{ reply: CounterReply; via: { workerIndex: number } }>(relay, { to: target, message: { op: 'inc' } });
  assert.equal(r.via.workerIndex, 0);
  assert.equal(r.reply.workerIndex, 1);
  assert.equal(r.reply.count, 1);

  const chunks: unknown[] = [];
  const streamed = await system.ask<{ reply: unknown }>(relay, { to: { kind: 'streamer', key: 'x' }, message: { n: 3 }, stream: true }, { onChunk: (c) => chunks.push(c) });
  assert.deepEqual(streamed.reply, { done: 3 });
  assert.deepEqual(chunks, [{ relayed: { i: 0 } }, { relayed: { i: 1 } }, { relayed: { i: 2 } }]);

  // Errors cross two thread hops as values and come back as the same code.
  const err = await rejection(system.ask(relay, { to: target, message: { op: 'not-found' } }));
  assert.equal(err.code, 'NOT_FOUND');
});
