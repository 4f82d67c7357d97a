import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LmdbStore } from '../../runtime/index.js';
import { EventRecorder, EventStore, ThreadedEventWriter, type NewAnalyticsEvent } from '../../actors/index.js';

const event = (i: number, extra: Partial<NewAnalyticsEvent> = {}): NewAnalyticsEvent => ({
  tenantId: 't', projectId: 'p', category: 'tool', event_type: 'tool_call', agent_name: 'a', session_id: `s${i % 3}`, channel: 'api',
  timestamp: new Date(Date.UTC(2030, 0, 1) + i).toISOString(), duration_ms: i, error: null, span_id: null, parent_span_id: null, metadata: {}, ...extra,
});

describe('event recorder', () => {
  test('batches events into few transactions and close() flushes the rest', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'parley-recorder-'));
    const store = new LmdbStore({ path: dir, durability: 'commit' });
    try {
      const events = new EventStore(store, { retentionDays: 30 });
      const recorder = new EventRecorder(events, { batchSize: 1000, flushMs: 50 });
      for (let i = 0; i < 2500; i++) recorder.record(event(i));
      await recorder.close();
      const stats = recorder.stats();
      assert.equal(stats.recorded, 2500);
      assert.equal(stats.dropped, 0);
      assert.equal(stats.queued, 0);
      assert.ok(stats.flushes >= 1 && stats.flushes <= 3, `flushes ${stats.flushes}`);
      const page = events.query({ tenantId: 't', projectId: 'p', from: 0, to: Date.UTC(2031, 0, 1), limit: 1 });
      assert.equal(page.total, 2500);
      assert.equal(events.sessionEvents('t', 'p', 's1').length, 833);
      // Ids are time-ordered and unique.
      const all = events.query({ tenantId: 't', projectId: 'p', from: 0, to: Date.UTC(2031, 0, 1), limit: 10_000, order: 'asc' }).events.map((e) => e.id);
      assert.equal(new Set(all).size, 2500);
      assert.deepEqual([...all].sort(), all);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('under overload it sheds events with a counter instead of queueing without bound', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const written: NewAnalyticsEvent[] = [];
    // A writer stuck on a slow disk: the first flush never ends until released.
    const recorder = new EventRecorder({ writeNew: async (batch) => { await gate; written.push(...batch); } }, { maxQueue: 100, batchSize: 10, flushMs: 1 });
    for (let i = 0; i < 10_000; i++) recorder.record(event(i));
    await new Promise((r) => setTimeout(r, 20));
    for (let i = 0; i < 1000; i++) recorder.record(event(i));
    const stats = recorder.stats();
    assert.ok(stats.dropped >= 10_000, `dropped ${stats.dropped}`);
    assert.ok(stats.queued <= 100);
    release();
    await recorder.close();
    assert.equal(recorder.stats().recorded + recorder.stats().dropped, 11_000);
    assert.equal(written.length, recorder.stats().recorded);
  });

  test('a failing writer or a bad event is counted as dropped, never thrown', async () => {
    const recorder = new EventRecorder({ writeNew: async () => { throw new Error('disk full'); } }, { flushMs: 1 });
    recorder.record(event(1));
    recorder.record(event(2, { timestamp: 'not a time' }));
    recorder.record(null as unknown as NewAnalyticsEvent);
    await recorder.close();
    recorder.record(event(3));
    assert.deepEqual(recorder.stats(), { recorded: 0, dropped: 4, flushes: 1, queued: 0, writing: 0 });
  });
});

describe('threaded event writer', () => {
  test('a recorder over the writer thread commits every event once, ids time-ordered, rollups exact, and close() drains it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'parley-writer-'));
    const writer = new ThreadedEventWriter({ path: dir, durability: 'commit', retentionDays: 30 });
    // Small flushes, as on a busy thread: the writer thread gathers them into fewer transactions.
    const recorder = new EventRecorder(writer, { batchSize: 500, flushMs: 5 });
    for (let i = 0; i < 6000; i++) recorder.record(event(i, { projectId: i % 4 === 0 ? 'q' : 'p', category: i % 3 === 0 ? 'llm' : 'tool' }));
    await recorder.close();
    await writer.close();
    assert.deepEqual(recorder.stats(), { recorded: 6000, dropped: 0, flushes: recorder.stats().flushes, queued: 0, writing: 0 });
    const store = new LmdbStore({ path: dir, durability: 'commit' });
    try {
      const events = new EventStore(store, { retentionDays: 30 });
      const range = { tenantId: 't', from: 0, to: Date.UTC(2031, 0, 1) };
      const p = events.query({ ...range, projectId: 'p', limit: 10_000, order: 'asc' });
      const q = events.query({ ...range, projectId: 'q', limit: 10_000, order: 'asc' });
      assert.equal(p.total, 4500);
      assert.equal(q.total, 1500);
      const ids = p.events.map((e) => e.id);
      assert.equal(new Set(ids).size, 4500);
      assert.deepEqual([...ids].sort(), ids);
      assert.deepEqual(p.events.map((e) => e.duration_ms), Array.from({ length: 6000 }, (_, i) => i).filter((i) => i % 4 !== 0));
      const byCategory = events.aggregate({ ...range, projectId: 'p', groupBy: ['category'], metrics: ['count'] });
      assert.deepEqual(byCategory.map((b) => [b['category'], b['count']]).sort(), [['llm', 1500], ['tool', 3000]]);
      assert.equal(events.sessionEvents('t', 'q', 's1').length, 500);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
