import assert from 'node:assert/strict';
import { test } from 'node:test';
import { rejection, RuntimeHarness } from '../fixtures/runtime/harness.js';

test('workers that keep dying during start-up are not respawned forever; the system is not ready and asks fail fast', async (t) => {
  const h = new RuntimeHarness(t);
  const config = h.config(await h.dataDir(), { workers: 2 });
  const system = await h.start(config, { kindsModule: new URL('../fixtures/runtime/broken-kinds.js', import.meta.url).href, maxStartupDeaths: 3 });
  assert.equal(system.ready, false);
  const stats = system.stats();
  assert.deepEqual(stats.workers.map((w) => w.state), ['failed', 'failed']);
  // 2 first starts + respawns until the 3rd consecutive start-up death, then none.
  assert.equal(stats.workers.reduce((n, w) => n + w.restarts, 0), 2);
  const started = performance.now();
  assert.equal((await rejection(system.ask({ kind: 'counter', key: 'k' }, { op: 'get' }))).code, 'SERVICE_UNAVAILABLE');
  assert.ok(performance.now() - started < 100, 'the ask waited instead of failing fast');
});
