import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getPriority } from 'node:os';
import { Worker } from 'node:worker_threads';
import { currentThreadId } from '../../runtime/index.js';

// Thread priorities exist on Linux only (/proc/thread-self); elsewhere the function must say it
// did nothing and leave the process alone.
test('lowerThreadPriority lowers only the calling thread where threads have priorities, and reports false elsewhere', async () => {
  const moduleUrl = new URL('../../runtime/thread-priority.js', import.meta.url).href;
  const worker = new Worker(
    `import(${JSON.stringify(moduleUrl)}).then((m) => { const ok = m.lowerThreadPriority(); require('node:worker_threads').parentPort.postMessage({ ok, tid: m.currentThreadId() }); });`,
    { eval: true },
  );
  const { ok, tid } = await new Promise<{ ok: boolean; tid: number | undefined }>((resolve, reject) => worker.once('message', resolve).once('error', reject));
  try {
    const processPriority = getPriority(process.pid);
    assert.notEqual(processPriority, 19);
    if (currentThreadId() === undefined) {
      assert.equal(ok, false);
      assert.equal(tid, undefined);
      return;
    }
    assert.equal(ok, true);
    assert.notEqual(tid, currentThreadId());
    assert.equal(getPriority(tid!), 19);
    assert.equal(getPriority(currentThreadId()!), processPriority);
  } finally {
    await worker.terminate();
  }
});
