import assert from 'node:assert/strict';
import { test } from 'node:test';
import { threadId } from 'node:worker_threads';
import { LmdbStore } from '../../runtime/index.js';
import type { CounterReply } from '../fixtures/runtime/test-kinds.js';
import { rejection, RuntimeHarness } from '../fixtures/runtime/harness.js';

test('with workers = 0 the same counter actor runs on the main thread over the given store', async (t) => {
  const h = new RuntimeHarness(t);
  const dir = await h.dataDir();
  const config = h.config(dir, { workers: 0 });
  const store = new LmdbStore({ path: dir, durability: config.durability });
  h.defer(() => store.close());
  const system = await h.start(config, { store });
  assert.equal(system.ready, true);

  const ref = { kind: 'counter', key: 'local' };
  for (let i = 0; i < 3; i++) await system.ask(ref, { op: 'inc' });
  const r = await system.ask<CounterReply>(ref, { op: 'get' });
  assert.equal(r.count, 3);
  assert.equal(r.threadId, threadId);
  assert.equal(r.workerIndex, -1);
  assert.equal(store.collection<number>('test-counter').get(['local']), 3, 'not written to the given store');
  assert.deepEqual(system.stats().workers, []);

  // Handler failures, streaming and actor-to-actor asks behave as with workers.
  assert.equal((await rejection(system.ask(ref, { op: 'dirty-throw', secret: 'x' }))).code, 'INTERNAL_ERROR');
  const chunks: unknown[] = [];
  await system.ask({ kind: 'streamer', key: 's' }, { n: 3 }, { onChunk: (c) => chunks.push(c) });
  assert.deepEqual(chunks, [{ i: 0 }, { i: 1 }, { i: 2 }]);
  const relayed = await system.ask<{ reply: CounterReply }>({ kind: 'relay', key: 'r' }, { to: ref, message: { op: 'get' } });
  assert.equal(relayed.reply.count, 3);

  await system.close();
  assert.equal(system.ready, false);
  assert.equal((await rejection(system.ask(ref, { op: 'get' }))).code, 'SERVICE_UNAVAILABLE');
  assert.equal(store.isOpen, true, 'closing the system closed a store it does not own');
});
