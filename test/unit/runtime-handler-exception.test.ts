import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ParleyError } from '../../runtime/index.js';
import type { CounterReply } from '../fixtures/runtime/test-kinds.js';
import { rejection, RuntimeHarness } from '../fixtures/runtime/harness.js';

test('a handler exception fails only that message with INTERNAL_ERROR and the actor restarts from its persisted state', async (t) => {
  const h = new RuntimeHarness(t);
  const system = await h.start(h.config(await h.dataDir()));
  const ref = { kind: 'counter', key: 'fragile' };
  await system.ask(ref, { op: 'inc' });
  const before = await system.ask<CounterReply>(ref, { op: 'inc' });
  assert.equal(before.count, 2);

  const secret = 's3cr3t-token-value';
  const err = await rejection(system.ask(ref, { op: 'dirty-throw', secret }, { requestId: 'req-42' }));
  assert.ok(err instanceof ParleyError);
  assert.equal(err.code, 'INTERNAL_ERROR');
  assert.equal(err.message, 'Unexpected internal error');
  assert.deepEqual(err.details, { requestId: 'req-42' });
  assert.ok(!JSON.stringify({ ...err, message: err.message }).includes(secret), 'the exception text leaked to the asker');

  // The in-memory +1000 of the failed message is gone: the instance was rebuilt from LMDB.
  const after = await system.ask<CounterReply>(ref, { op: 'get' });
  assert.equal(after.count, 2);
  assert.notEqual(after.incarnation, before.incarnation);

  // Without a request id, one is made up so the log line and the reply can still be matched.
  const anon = await rejection(system.ask(ref, { op: 'dirty-throw', secret }));
  assert.equal(anon.code, 'INTERNAL_ERROR');
  assert.match(String(anon.details?.requestId), /^[0-9a-f-]{36}$/);
});

test('a ParleyError thrown on purpose is the reply and the actor is kept', async (t) => {
  const h = new RuntimeHarness(t);
  const system = await h.start(h.config(await h.dataDir()));
  const ref = { kind: 'counter', key: 'picky' };
  const first = await system.ask<CounterReply>(ref, { op: 'inc' });
  const err = await rejection(system.ask(ref, { op: 'not-found' }));
  assert.ok(err instanceof ParleyError);
  assert.equal(err.code, 'NOT_FOUND');
  assert.equal(err.message, 'No such thing');
  assert.deepEqual(err.details, { key: 'picky' });
  const again = await system.ask<CounterReply>(ref, { op: 'get' });
  assert.equal(again.incarnation, first.incarnation);
  assert.equal(again.count, 1);
});
