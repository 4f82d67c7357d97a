import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ParleyError } from '../../runtime/index.js';
import { RuntimeHarness } from '../fixtures/runtime/harness.js';

test('messages over the mailbox limit are refused with QUEUE_FULL and a retry hint', async (t) => {
  const h = new RuntimeHarness(t);
  const system = await h.start(h.config(await h.dataDir(), { mailboxLimit: 3 }));
  const ref = { kind: 'counter', key: 'crowded' };
  // One running + three waiting fill it; the fifth is refused.
  const results = await Promise.allSettled(Array.from({ length: 5 }, () => system.ask(ref, { op: 'sleep', ms: 100 })));
  assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'rejected']);
  const refused = (results[4] as PromiseRejectedResult).reason as ParleyError;
  assert.ok(refused instanceof ParleyError);
  assert.equal(refused.code, 'QUEUE_FULL');
  assert.equal(typeof refused.details?.retryAfterMs, 'number');
  assert.ok((refused.details!.retryAfterMs as number) > 0);
  // Once drained it takes messages again.
  await system.ask(ref, { op: 'get' });
});
