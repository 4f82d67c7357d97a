import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RuntimeHarness } from '../fixtures/runtime/harness.js';

test('chunks an actor emits arrive in order, all before its reply', async (t) => {
  const h = new RuntimeHarness(t);
  const system = await h.start(h.config(await h.dataDir()));
  const seen: string[] = [];
  const reply = await system.ask<{ done: number }>({ kind: 'streamer', key: 's' }, { n: 25 }, { onChunk: (c) => seen.push(`chunk:${(c as { i: number }).i}`) });
  seen.push('reply');
  assert.deepEqual(reply, { done: 25 });
  assert.deepEqual(seen, [...Array.from({ length: 25 }, (_, i) => `chunk:${i}`), 'reply']);

  // Without a listener the actor's emits are dropped at the source and the reply still comes.
  assert.deepEqual(await system.ask({ kind: 'streamer', key: 's' }, { n: 5 }), { done: 5 });
});

test('a throwing onChunk listener does not break the ask', async (t) => {
  const h = new RuntimeHarness(t);
  const system = await h.start(h.config(await h.dataDir()));
  const reply = await system.ask({ kind: 'streamer', key: 's' }, { n: 3 }, { onChunk: () => { throw new Error('listener bug'); } });
  assert.deepEqual(reply, { done: 3 });
});
