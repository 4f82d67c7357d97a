import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CounterReply } from '../fixtures/runtime/test-kinds.js';
import { RuntimeHarness } from '../fixtures/runtime/harness.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

test('an idle actor is passivated and the next message rehydrates it from LMDB', async (t) => {
  const h = new RuntimeHarness(t);
  const system = await h.start(h.config(await h.dataDir(), { actorIdleMs: 60 }));
  const ref = { kind: 'counter', key: 'sleepy' };
  const first = await system.ask<CounterReply>(ref, { op: 'inc' });
  assert.equal(first.passivations, 0);

  // Busy actors stay: a message every 20 ms keeps the same instance.
  for (let i = 0; i < 8; i++) {
    await sleep(20);
    const r = await system.ask<CounterReply>(ref, { op: 'get' });
    assert.equal(r.incarnation, first.incarnation, 'a busy actor was passivated');
  }

  await sleep(200); // idle 60 ms + a sweep every 30 ms, with margin
  const back = await system.ask<CounterReply>(ref, { op: 'get' });
  assert.notEqual(back.incarnation, first.incarnation, 'the idle instance was not dropped');
  assert.equal(back.passivations, 1, 'passivate() did not run before the drop');
  assert.equal(back.count, 1);
});
