import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RuntimeHarness } from '../fixtures/runtime/harness.js';

interface SequencerReply {
  seq: number;
  seen: number[];
  maxActive: number;
}

const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

test('many concurrent asks to one actor are handled one at a time, in arrival order', async (t) => {
  const h = new RuntimeHarness(t);
  const system = await h.start(h.config(await h.dataDir()));
  const n = 40;
  // Varying delays: if two messages overlapped, a shorter later one would overtake an earlier one.
  const replies = await Promise.all(range(n).map((seq) => system.ask<SequencerReply>({ kind: 'sequencer', key: 'ordered' }, { seq, delayMs: (n - seq) % 4 })));
  for (const [i, reply] of replies.entries()) {
    assert.equal(reply.seq, i);
    assert.deepEqual(reply.seen, range(i + 1));
  }
  assert.equal(Math.max(...replies.map((r) => r.maxActive)), 1, 'two messages of one actor overlapped');
});

test('messages that arrive while the actor is being created (async) queue behind its creation, in order', async (t) => {
  const h = new RuntimeHarness(t);
  const system = await h.start(h.config(await h.dataDir()));
  const replies = await Promise.all(range(10).map((i) => system.ask<number[]>({ kind: 'slowStart', key: 'late' }, i)));
  for (const [i, seen] of replies.entries()) assert.deepEqual(seen, range(i + 1));
});
