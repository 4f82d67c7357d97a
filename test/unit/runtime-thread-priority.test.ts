import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getPriority } from 'node:os';
import { Worker } from 'node:worker_threads';
import { currentThreadId } from '../../runtime/index.js';

const onLinux = currentThreadId() !== undefined;

test('lowerThreadPriority lowers only the calling thread', { skip: onLinux ? false : 'no /proc/thread-self here: thread priorities are Linux-only, the function does nothing elsewhere' }, async () => {
  const moduleUrl = new URL('../../runtime/thread-priority.js', import.meta.url).href;
  const worker = new Worker(
    `import(${JSON.stringify(moduleUrl)}).then((m) => { const ok = m.lowerThreadPriority(); require('node:worker_threads').parentPort.postMessage({ ok, tid: m.currentThreadId() }); });`,
    { eval: true },
  );
  const { ok, tid } = await new Promise<{ ok: boolean; tid: number }>((resolve, reject) => worker.once('message', resolve).once('error', reject));
  try {
    assert.equal(ok, true);
    assert.notEqual(tid, currentThreadId());
    assert.equal(getPriority(tid), 19);
    assert.equal(getPriority(currentThreadId()!), getPriority(process.pid));
    assert.notEqual(getPriority(process.pid), 19);
  } finally {
    await worker.terminate();
  }
});
